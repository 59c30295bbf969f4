// Calibrate the instrument on the host that will send the load (`rig calibrate`'s floor and eight cases): this
// host for a local rig, before anything is made; an AWS rig's load node, which exists only once
// provisioned (after its prepare and service steps, on its data-plane queue). Nothing measured after
// an uncalibrated instrument is a verdict: such a campaign is never "held" (lib/protocol/configuration-state.ts).
import { calibratesOnRigNode } from '../../lib/protocol/spec';
import type { Campaign } from './context';

/** Where this call would calibrate: `host` before provisioning, `rig` on the rig's load node. */
export type CalibrationPlace = 'host' | 'rig';

export async function calibrate(cx: Campaign, at: CalibrationPlace): Promise<void> {
  const { spec, campaignId } = cx;
  const onRig = calibratesOnRigNode(spec.target);
  if (!spec.calibrate || onRig !== (at === 'rig')) return;
  // Fine enough is relative to what will be judged: the instrument's floor against the smallest p99 limit.
  const limits = spec.sustained?.configurations.map((c) => c.p99LimitMs) ?? [];
  const p99LimitMs = limits.length ? Math.min(...limits) : undefined;
  if (at === 'host') {
    const calibrateActs = cx.machine({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' });
    const r = await cx.step('calibrate', () => calibrateActs.calibrateInstrument({ campaignId, p99LimitMs }), (r) => r.summary);
    cx.stealBoundPct = r.stealBoundPct;
  } else {
    const rig = cx.theRig;
    const r = await cx.step('calibrate', () => cx.data({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' }).calibrateInstrument({ campaignId, p99LimitMs, rig }), (r) => r.summary);
    cx.stealBoundPct = r.stealBoundPct;
  }
}
