// The warm-ups on the page: what the first seconds against the target looked like, re-derived from
// each warm-up's own stream and marked "warm-up, not measured". Never counted, gated or pooled: no
// figure here reaches a configuration's summary, the At-a-glance table or a baseline. Pure.
import type { CampaignSpec } from '../../protocol/spec';
import type { WarmupEvidence } from './load';
import { ms, num, type Table } from './cells';
import type { WarmupModel } from './model-types';

const msOf = (us: number | null | undefined) => (us === null || us === undefined ? null : Math.round(us / 10) / 100);

export function buildWarmups(warmups: WarmupEvidence[]): WarmupModel[] {
  return warmups.map((w) => {
    const i = w.analysis?.ingest ?? null;
    return {
      config: w.config,
      attempt: w.attempt,
      dir: w.dir,
      seconds: w.load?.seconds ?? w.judged?.seconds ?? null,
      rate: w.load?.rate ?? null,
      batch: w.load?.batch ?? null,
      sent: i?.sent ?? null,
      ok: i?.ok ?? null,
      failed: i?.failed ?? null,
      dropped: i?.dropped ?? null,
      p50_ms: msOf(i?.p50_us),
      p99_ms: msOf(i?.p99_us),
      max_ms: msOf(i?.max_us),
      freeze_seconds: i?.freeze_seconds ?? [],
      rows_reconciled: w.reconcile?.rows_written ?? null,
      reconciled: i && w.reconcile ? w.reconcile.rows_written === i.events_claimed && w.reconcile.quantity_gained === i.quantity_claimed : null,
      ok_to_measure: w.judged?.ok ?? null,
      reasons: w.judged?.reasons ?? [],
      problems: w.problems,
    };
  });
}

/** The Method line: what a warm-up is, and that it is not part of any figure. */
export function warmupMethod(spec: CampaignSpec): string {
  const s = spec.sustained?.warmupSeconds ?? spec.ladder?.warmupSeconds ?? 0;
  if (s <= 0) return 'No warm-up (warmupSeconds 0): the first repeat of each configuration met the service as it was after seeding, as the protocol is written.';
  const what = spec.sustained ? "each configuration's first repeat, at that configuration's own rate and batch" : "the ladder's first rung, at its rate and batch";
  return `A ${s}-s warm-up ran against the target before ${what}, followed by a cool-down: its requests carry their own run tag and are reconciled, and its figures are shown under Runs marked "warm-up, not measured"; none of them is counted, gated or pooled into any figure above.`;
}

/** The Conditions row. */
export function warmupCondition(spec: CampaignSpec, warmups: WarmupModel[]): string {
  const s = spec.sustained?.warmupSeconds ?? spec.ladder?.warmupSeconds ?? 0;
  if (s <= 0) return 'off (warmupSeconds 0)';
  return `${s} s per ${spec.sustained ? 'configuration' : 'ladder'}, then a cool-down; ${warmups.length} warm-up run${warmups.length === 1 ? '' : 's'} in the evidence (not measured)`;
}

export function warmupTable(warmups: WarmupModel[]): Table {
  return {
    header: ['warm-up, not measured', 'offered', 'sent / 2xx / failed / dropped', 'p50', 'p99', 'max', 'freeze-seconds', 'rows under its tag', 'judged'],
    rows: warmups.map((w) => ({
      cells: [
        `${w.config} (attempt ${w.attempt}, ${w.dir})`,
        w.rate === null ? '—' : `${num(w.rate, 0)} ev/s at batch ${num(w.batch, 0)} for ${num(w.seconds, 0)} s`,
        `${num(w.sent, 0)} / ${num(w.ok, 0)} / ${num(w.failed, 0)} / ${num(w.dropped, 0)}`,
        ms(w.p50_ms),
        ms(w.p99_ms),
        ms(w.max_ms),
        w.freeze_seconds.length ? `${w.freeze_seconds.length} (at ${w.freeze_seconds.join(', ')} s)` : '0',
        `${num(w.rows_reconciled, 0)}${w.reconciled === null ? ' (not reconciled)' : w.reconciled ? ' (= acknowledged)' : ' (≠ acknowledged)'}`,
        w.ok_to_measure === null ? `no warmup.json${w.problems.length ? `: ${w.problems.join('; ')}` : ''}` : w.ok_to_measure ? 'ok to measure' : `stopped the campaign: ${w.reasons.join('; ')}`,
      ],
      cls: w.ok_to_measure === false ? 'failed' : 'not-run',
    })),
  };
}
