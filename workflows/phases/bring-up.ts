// Bring-up (the protocol's bringup.sh): a rig that is running and verified, with something to measure.
// An AWS rig is made whole on its own hosts first (prepareRigNodes: the database from the load node,
// the service on the app node); then bring-up's fixtures and refusals (lib/targets/bringup). A step
// that checks the database after bring-up goes at the end of bringUp.
import { ApplicationFailure, patched } from '@temporalio/workflow';
import { calibratesDatabase } from '../../lib/protocol/plan';
import { serviceLaunch } from '../../lib/protocol/service-spec';
import type { Campaign } from './context';

/** A rig with an app node (aws): its database prepared from the load node, its service started on the app node. */
export async function prepareRigNodes(cx: Campaign): Promise<void> {
  const appQueue = cx.theRig.appQueue;
  if (!appQueue) return;
  const { campaignId, spec } = cx;
  /**
   * No worker on the rig's hosts took `call`: the failure carries what those hosts said on their serial
   * consoles (nodeConsoleTail), so a node that never came up says why in the campaign's own failure.
   */
  const seeingNodes = <T>(call: () => Promise<T>) => () =>
    call().catch(async (err: unknown) => {
      if (!(err instanceof ApplicationFailure && err.type === 'NoWorker')) throw err;
      const { tail } = await cx.machine({ startToCloseTimeout: '2 minutes' }).nodeConsoleTail({ campaignId, target: spec.target });
      if (!tail) throw err;
      // The queue is the node's own: its worker is started by its bootstrap, not by a person.
      const which = err.message.replace(/: start one on the rig's host .*$/s, '');
      throw ApplicationFailure.nonRetryable(`${which}: the rig's nodes did not start their workers (their bootstrap runs at first boot). The nodes' serial consoles (EC2 GetConsoleOutput), last lines:\n${tail}`, 'NoWorker');
    });
  await cx.step('prepare', seeingNodes(() => cx.data({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' }).prepareRig({ campaignId, rig: cx.theRig })), (r) => r.summary);
  // The same object as before issue 14 for the reference service without env: only the activity's input, never a command, changes.
  const service = serviceLaunch(spec.service);
  const started = await cx.step('service', seeingNodes(() => cx.on(appQueue, { startToCloseTimeout: '5 minutes' }).startRigService({ campaignId, rig: cx.theRig, service })), (r) => r.summary);
  cx.rig = { ...cx.theRig, serviceUrl: started.serviceUrl };
}

/** Fixtures in place and verified (bring-up's refusals: lib/targets/bringup). */
export async function bringUp(cx: Campaign): Promise<void> {
  const rig = cx.theRig;
  await cx.step('bring-up', () => cx.data({ startToCloseTimeout: '5 minutes' }).bringUp({ campaignId: cx.campaignId, rig, customers: cx.spec.seed.customers }), (r) => r.summary);
  // The database side calibrated on the rig's own cluster (issue 31 item 6): a failed case marks the page, never stops the campaign.
  if (calibratesDatabase(cx.spec) && patched('database-calibration')) {
    await cx.step('calibrate-database', () => cx.data({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '1 minute' }).calibrateDatabase({ campaignId: cx.campaignId, rig }), (r) => r.summary);
  }
}
