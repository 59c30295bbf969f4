// A ladder's shape: every rung by offered rate, the first one that did not hold (the knee), and the
// database's wait profile of the rungs around it. Pure: the configurations of the model in, the
// ladder out.
//
// Why its own figures: the At-a-glance medians are over PASSING repeats (the page's rule), so a rung
// that did not hold reads "—" there; and on a ladder those rungs are the finding. Here a rung's
// delivered rate, p50 and p99 are the medians over every repeat that ran to its end and was
// reconciled, passed and failed alike, and the rung is marked with what it was. Repeats not published
// (not reconciled) stay in no figure, as everywhere on the page.
import type { FigureSummary } from '../../protocol/reporting';
import type { CampaignSpec } from '../../protocol/spec';
import { measuredConfigurations, variantNames } from '../../protocol/variants';
import { topWaits } from './db-summary';
import type { ConfigurationModel, LadderModel, LadderRung, RungStatus, VariantLadder } from './model-types';
import { num } from './cells';

function figure(values: Array<number | null>): FigureSummary | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const k = v.length >> 1;
  const median = v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
  return { median: Math.round(median * 1000) / 1000, min: v[0], max: v[v.length - 1], n: v.length };
}

function rungOf(c: ConfigurationModel): LadderRung {
  const finished = c.repeats.filter((r) => (r.status === 'passed' || r.status === 'failed') && r.report);
  const onInstrumentAlone = (r: (typeof c.repeats)[number]) => {
    const failedGates = r.checks.filter((g) => !g.passed);
    return failedGates.length > 0 && failedGates.every((g) => g.name === 'instrument');
  };
  const late = c.repeats.filter((r) => r.status === 'failed' && onInstrumentAlone(r));
  const failed = c.repeats.filter((r) => r.status === 'failed' && !late.includes(r));
  const status: RungStatus = failed.length
    ? 'did-not-hold'
    : late.length
      ? 'instrument-late'
      : c.repeats.some((r) => r.status === 'not-published')
      ? 'not-published'
      : c.summary.held
        ? 'held'
        : finished.length
          ? 'incomplete'
          : 'not-run';
  const withDb = finished.filter((r) => r.db);
  return {
    name: c.name,
    offered_evps: c.events_per_second,
    batch: c.batch,
    status,
    passed: c.summary.label,
    repeats: finished.length,
    delivered_evps: figure(finished.map((r) => r.report!.delivered_rate)),
    p50_ms: figure(finished.map((r) => r.report!.p50_ms)),
    p99_ms: figure(finished.map((r) => r.report!.p99_ms)),
    dropped: finished.length ? finished.reduce((s, r) => s + r.report!.dropped, 0) : null,
    reasons: [...failed, ...late].sort((a, b) => a.repeat - b.repeat).map((r) => `r${r.repeat}: ${r.reasons.join('; ')}`),
    waits: {
      sampled: withDb.length,
      top: topWaits(withDb.map((r) => r.db!)),
      samples: withDb.reduce((n, r) => n + r.db!.backend_samples, 0),
      snapshots: withDb.reduce((n, r) => n + r.db!.rows, 0),
    },
  };
}

/** The ladder of a campaign's rungs (planned ones only, by offered rate); null without rungs. */
export function buildLadder(configurations: readonly ConfigurationModel[]): LadderModel | null {
  const rungs = configurations
    .filter((c) => c.kind === 'rung' && !c.unplanned)
    .sort((a, b) => a.events_per_second - b.events_per_second)
    .map(rungOf);
  if (!rungs.length) return null;
  const k = rungs.findIndex((r) => r.status === 'did-not-hold');
  if (k < 0) return { rungs, knee: null };
  const below = rungs.slice(0, k).reverse().find((r) => r.status === 'held');
  return {
    rungs,
    knee: {
      rung: rungs[k].name,
      offered_evps: rungs[k].offered_evps,
      last_held: below?.name ?? null,
      reasons: rungs[k].reasons,
      around: rungs.slice(Math.max(0, k - 1), k + 2).map((r) => r.name),
    },
  };
}

/** Each variant's ladder, control first, from the rungs measured under it (`rung-<rate>.<variant>`). */
export function buildVariantLadders(spec: CampaignSpec, configurations: readonly ConfigurationModel[]): VariantLadder[] {
  const measured = measuredConfigurations(spec);
  return variantNames(spec).map((variant) => {
    const mine = new Set(measured.filter((c) => c.variant === variant).map((c) => c.name));
    return { variant, ladder: buildLadder(configurations.filter((c) => mine.has(c.name))) };
  });
}

/** Where a ladder's knee is, in a few words: "at 800 ev/s (last held 400 ev/s)" or "none up to 1,600 ev/s". */
export function kneeWhere(l: LadderModel | null): string {
  if (!l) return 'no rung ran';
  const at = (name: string | null) => {
    const r = name === null ? undefined : l.rungs.find((x) => x.name === name);
    return r ? `${num(r.offered_evps, 0)} ev/s` : 'none';
  };
  if (l.knee) return `at ${at(l.knee.rung)} (last held: ${at(l.knee.last_held)})`;
  const ran = l.rungs.filter((r) => r.status !== 'not-run');
  return ran.length ? `none up to ${at(ran[ran.length - 1].name)}` : 'no rung ran';
}

/** The ladders a page shows, each with its chart key and title suffix: the one ladder, or one per variant. */
export function laddersShown(m: { ladder?: LadderModel | null; variant_ladders?: VariantLadder[] }): Array<{ key: string; variant: string | null; ladder: LadderModel }> {
  if (m.ladder) return [{ key: 'ladder', variant: null, ladder: m.ladder }];
  return (m.variant_ladders ?? []).filter((v) => v.ladder).map((v) => ({ key: `ladder:${v.variant}`, variant: v.variant, ladder: v.ladder! }));
}
