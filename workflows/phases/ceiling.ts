// The closed-loop ceiling (the protocol's K6_MODE=max measure.sh): workers that wait for each reply,
// as fast as the target answers. A ceiling, never a service level: its rate is the denominator's
// reference (hardcountEventsPerSecond).
import type { Campaign } from './context';
import { keepAppNode, repeatActs } from './repeat';

export async function ceiling(cx: Campaign): Promise<void> {
  const { spec, campaignId, progress } = cx;
  if (!spec.ceiling || cx.aborting) return;
  const c = spec.ceiling;
  progress.configuration = 'ceiling';
  progress.repeat = undefined;
  progress.phase = undefined;
  cx.ceiling = await cx.step(
    'ceiling',
    async () => {
      const out = await repeatActs(cx, c.seconds).runRepeat({
        campaignId,
        rig: cx.theRig,
        kind: 'ceiling',
        configuration: { name: 'ceiling', eventsPerSecond: 1, batch: c.batch, p99LimitMs: Number.MAX_SAFE_INTEGER },
        index: 1,
        seconds: c.seconds,
        probe: { rate: 0, p99BudgetMs: 500 },
        driftLimit: 1.5,
        maxInFlight: c.workers,
        closedLoopWorkers: c.workers,
      });
      cx.interrupted.push(...out.interrupted);
      await keepAppNode(cx);
      return out.summary;
    },
    (r) => `${Math.round(r.deliveredRate)} ev/s closed loop (${c.workers} workers, batch ${c.batch}); p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
  );
}
