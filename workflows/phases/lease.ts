// Before anything is measured: the host is claimed (its machine-bound steps go to its own queue), the
// campaign's evidence folder is opened, and the host's measuring lease is taken (one measurement per
// host at a time, workflows/host-lease.ts). The lease is given back after the teardown (releaseLease).
import { condition, getExternalWorkflowHandle, log, setHandler } from '@temporalio/workflow';
import { hostQueue as hostQueueOf, leaseWorkflowId } from '../../lib/temporal/queues';
import { failureReason, refusalType } from '../failures';
import { leaseGrantedSignal, leaseReleaseSignal } from '../messages';
import { RigCampaign, RigStatus, RigStep, RigTarget } from '../search-attributes';
import { temporalCallOptions } from '../temporal-calls';
import { control, StopBeforeMeasuring, type Campaign } from './context';

/** openCampaign's refusal of a folder that belongs to another run (activities/campaign-open.ts). */
export const EVIDENCE_OWNER_REFUSAL = 'EvidenceOwnerRefusal';

/**
 * claimHost -> openCampaign -> the measuring lease of the claimed host. The claim names the host of
 * the worker that took it (activities/host.ts): the campaign's machine-bound steps (open, calibrate,
 * clean-check, provision, teardown, report) and its watchdog's teardown go to that host's own queue,
 * never to a worker on another machine. The lease is taken before calibration and given back after
 * the teardown; a second campaign waits, saying for whom.
 */
export async function claimHostAndLease(cx: Campaign): Promise<void> {
  const { spec, campaignId, workflowId, progress } = cx;
  setHandler(leaseGrantedSignal, () => {
    cx.leaseGranted = true;
  });
  // Pinned (the spec's host): the claim is taken from that host's own queue, so only its worker answers.
  const claimed = spec.host ? await cx.on(hostQueueOf(spec.host), { startToCloseTimeout: '1 minute' }).claimHost() : await control({}).claimHost();
  cx.hostQueue = claimed.hostQueue;
  const host = claimed.host;
  progress.host = host;
  log.info('host claimed: its machine-bound steps go to its own queue', { host, queue: cx.hostQueue });
  const opened = await cx
    .machine({})
    .openCampaign({ campaignId, spec })
    .catch((err: unknown) => {
      // The folder is another run's (same workflow id started again): nothing of this run goes there.
      if (refusalType(err) === EVIDENCE_OWNER_REFUSAL) cx.evidenceRefused = failureReason(err);
      throw err;
    });
  cx.missingAttributes = opened.missingSearchAttributes;
  cx.setSearchAttributes([
    { key: RigCampaign, value: campaignId },
    { key: RigTarget, value: spec.target },
    { key: RigStep, value: 'start' },
    { key: RigStatus, value: 'running' },
  ]);
  cx.leaseHost = host;
  /** The host's lease is asked through a failover of the cluster (workflows/temporal-calls.ts), for up to 10 minutes. */
  const leaseActs = control(temporalCallOptions('10 minutes'));
  // Before calibration: what the instrument and the repeats measure is this campaign's load alone.
  await cx.step(
    'lease',
    async () => {
      const askedMs = Date.now();
      const now = await leaseActs.requestLease({ host, workflowId, ...(spec.watchdogCheckSeconds ? { holderCheckMs: spec.watchdogCheckSeconds * 1000 } : {}) });
      if (!cx.leaseGranted) {
        progress.waitingFor = `the measuring lease of host ${host}, held by ${now.heldBy ?? 'another campaign'}${now.since ? ` since ${now.since}` : ''}`;
        log.info(`waiting for ${progress.waitingFor}`);
      }
      await condition(() => cx.leaseGranted || cx.aborting);
      progress.waitingFor = undefined;
      if (!cx.leaseGranted) throw new StopBeforeMeasuring('aborted while waiting for the lease');
      return { waitedMs: Date.now() - askedMs, heldBy: now.heldBy };
    },
    (r) => (r.heldBy ? `host ${host}: granted after ${Math.round(r.waitedMs / 60_000)} min waiting for ${r.heldBy}` : `host ${host}: granted at once`),
  );
}

/** The host is free for the next campaign once this one's rig is gone (its clean-check would see it). */
export async function releaseLease(cx: Campaign): Promise<void> {
  if (cx.leaseHost === undefined) return;
  try {
    await getExternalWorkflowHandle(leaseWorkflowId(cx.leaseHost)).signal(leaseReleaseSignal, cx.workflowId);
  } catch (err) {
    log.warn('the lease could not be given back: its workflow has closed', { error: failureReason(err) });
  }
}
