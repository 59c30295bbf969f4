// The measured series (the protocol's SUSTAINED measure.sh, or its rate ladder): sustained
// configurations or a ladder's rungs, each repeat (rung) in the order lib/protocol/variants.ts gives,
// the rig taking a variant's settings when it changes, each configuration after its warm-up, a
// cool-down (a durable timer that an abort cuts short) between repeats. A ladder without variants
// issues the commands it always did (warm-up at its first rung, a cool-down after every rung), so
// that histories from before ladders took variants replay unchanged.
import { patched } from '@temporalio/workflow';
import { INVALID_STEAL_PCT, mayRerun } from '../../lib/protocol/repeat-validity';
import type { CampaignSpec } from '../../lib/protocol/spec';
import { measuringOrder, measuringSeries, variantSettings, warmsUpBefore, type MeasuringSeries } from '../../lib/protocol/variants';
import { outcomes, type Campaign } from './context';
import { followPlan } from './watchdog';
import { fansOut, nodeRepeat } from './load-nodes';
import { record, repeatActs } from './repeat';
import { reseedFresh } from './seed';
import { warmUp } from './warm-up';

/**
 * Active (patched): a sustained repeat that failed on the instrument's account (the generator late, or
 * the host's CPU steal over its bound) is INVALID (lib/protocol/repeat-validity.ts): kept, shown, not
 * counted, and run again once per configuration; invalid again, the configuration is NOT JUDGED
 * (instrument). It adds activities (the re-run) and timers, so a campaign started before it keeps
 * counting such a repeat as failed.
 */
const INVALID_RERUN_PATCH = 'instrument-invalid-rerun';

export async function measure(cx: Campaign): Promise<void> {
  const { spec, campaignId, progress } = cx;
  const series = measuringSeries(spec);
  if (!series) return;
  const judgeValidity = series.kind !== 'rung' && patched(INVALID_RERUN_PATCH);
  const m = seriesSettings(spec, series.kind);
  await cx.step(
    m.step,
    async () => {
      const plan = measuringOrder(spec);
      let current: string | undefined;
      let changes = 0;
      for (let i = 0; i < plan.length && !cx.aborting; i++) {
        const { configuration: measured, k } = plan[i];
        const { base: _base, variant, ...c } = measured;
        if (variant !== undefined && variant !== current) {
          const settings = variantSettings(spec, variant);
          const seq = ++changes;
          progress.configuration = c.name;
          progress.phase = 'variant';
          const rig = cx.theRig;
          const applied = await cx.step('variant', () => cx.data({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' }).applyVariant({ campaignId, rig, variant, seq, settings }), (r) => r.summary, true);
          // A restarted service may listen on another port: the repeats go where it is now.
          cx.rig = { ...rig, serviceUrl: applied.serviceUrl };
          // blocks with fresh: a variant after the first writes its own history into an emptied table.
          if (spec.variants!.fresh && current !== undefined && spec.seed.historyRows > 0) await reseedFresh(cx, variant, settings.service);
          current = variant;
        }
        if (warmsUpBefore(plan, i, series.kind)) {
          // A later warm-up of the same configuration (after a change of variant) keeps its own folder.
          const first = plan.findIndex((u) => u.configuration.name === c.name) === i;
          await warmUp(cx, first ? c : { ...c, name: `${c.name}.k${k}` }, m.warmupSeconds, m.maxInFlight, m.cooldownSeconds);
          if (cx.aborting) break;
        }
        progress.configuration = c.name;
        progress.repeat = { k, n: series.repeats };
        progress.phase = 'repeat';
        await followPlan(cx, 'measuring');
        cx.repeatEndsAtMs = Date.now() + m.seconds * 1000;
        const repeatInput = {
          campaignId,
          rig: cx.theRig,
          kind: series.kind,
          configuration: c,
          index: k,
          seconds: m.seconds,
          probe: m.probe,
          driftLimit: m.driftLimit,
          // Only when the spec says so: an older spec's repeat input stays byte for byte what it was.
          ...(m.driftNoted ? { driftNoted: true } : {}),
          maxInFlight: m.maxInFlight,
          ...(judgeValidity ? { validity: { stealBoundPct: cx.stealBoundPct ?? INVALID_STEAL_PCT } } : {}),
        };
        // load.nodes > 1 (issue 37): the repeat is sent from every load node and judged from the merge.
        const nodes = fansOut(cx, c, series.kind);
        const run = (input: typeof repeatInput & { attemptsBefore?: number }) => (nodes > 1 ? nodeRepeat(cx, input, nodes) : repeatActs(cx, m.seconds).runRepeat(input));
        const out = await run(repeatInput);
        await record(cx, out);
        // Invalid (the instrument's failure): after a cool-down, the same repeat once more, in
        // folders of its own; the first attempt stays in the evidence and on the page.
        if (judgeValidity && out.summary.invalid && mayRerun(cx.repeats, c.name) && !cx.aborting) {
          if (m.cooldownSeconds > 0) await cx.coolDown(m.cooldownSeconds);
          if (!cx.aborting) {
            progress.phase = 'repeat';
            // The re-run is time the plan did not count (the invalid repeat is not counted): the watchdog follows.
            await followPlan(cx, 'measuring');
            cx.repeatEndsAtMs = Date.now() + m.seconds * 1000;
            await record(cx, await run({ ...repeatInput, attemptsBefore: out.summary.attempt }));
          }
        }
        // Cool-down between repeats (a ladder's after its last rung too).
        if ((m.cooldownAfterLast || i < plan.length - 1) && m.cooldownSeconds > 0) await cx.coolDown(m.cooldownSeconds);
      }
      return outcomes(spec, cx.repeats);
    },
    (r) => r.map((c) => `${c.name} ${c.passed}/${c.total}`).join(', '),
  );
}

/** A ladder's rungs or the sustained repeats (as measuringSeries chose): their step, lengths, cool-downs, warm-up, probe and drift limit. */
function seriesSettings(spec: CampaignSpec, kind: MeasuringSeries['kind']) {
  if (kind === 'rung') {
    const l = spec.ladder!;
    return { step: 'ladder' as const, seconds: l.rungSeconds, cooldownSeconds: l.cooldownSeconds, cooldownAfterLast: true, maxInFlight: l.maxInFlight, warmupSeconds: l.warmupSeconds, probe: { rate: 0, p99BudgetMs: 500 }, driftLimit: 1.5, driftNoted: false };
  }
  const s = spec.sustained!;
  return { step: 'sustained' as const, seconds: s.repeatSeconds, cooldownSeconds: s.cooldownSeconds, cooldownAfterLast: false, maxInFlight: s.maxInFlight, warmupSeconds: s.warmupSeconds, probe: s.probe, driftLimit: s.driftLimit, driftNoted: s.drift === 'noted' };
}
