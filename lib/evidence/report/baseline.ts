// The weekly regression check: this campaign against a baseline campaign, configuration by
// configuration (matched by name). Pure: two report models in, a comparison out.
//
// A configuration REGRESSED when:
//   - it lost passes: its pass ratio (N/M) is below the baseline's (4/5 after 5/5);
//   - its p99 or p50 is "worse" by the comparison that knows noise (lib/protocol/compare.ts): the
//     whole rank interval of the shift, from the two campaigns' per-repeat figures, lies above zero;
//   - it is not published now but was in the baseline, or it is missing now;
//   - it cannot be compared (another rate or batch under the same name): a schedule that can no
//     longer vouch for a configuration must say so as loudly as a regression.
// A p99 or p50 that is "better" is flagged as faster but is not a regression (nothing got worse; the
// baseline may need renewing). New configurations are noted. The other figures (worst 10-s p99,
// freeze-seconds, drops, WAL per event) are compared by the same rule and shown, but do not alert.
//
// This replaces an exact rule (p99 median outside the baseline's min–max), which called three repeats
// of noise a regression about one week in five. With three repeats a side the rank interval does not
// exist at 95 %, so only a lost pass can alert; a schedule that wants its p99 watched runs 4 or more.
//
// tolerancePct (--tolerance, default 0) is the smallest shift worth a verdict, as a share of the
// baseline's median: a difference that is surely there but smaller is "no difference beyond X %".
import { comparisonMethod, type FigureComparison } from '../../protocol/compare';
import { compareConfigurations, comparisonHeader, comparisonRows, waitProfile, waitsRow } from './comparison';
import type { BaselineComparison, BaselineRow, BaselineSide, ConfigurationModel, ReportModel } from './model-types';
import { num, type Table } from './cells';

export interface BaselineOptions {
  tolerancePct?: number;
}

/** The figures whose verdict can make a regression (the rest are shown only). */
const ALERTING = new Set(['p99_ms', 'p50_ms']);
const LABEL: Record<string, string> = { p50_ms: 'p50', p99_ms: 'p99' };

function side(c: ConfigurationModel): BaselineSide {
  return {
    label: c.summary.label,
    passed: c.summary.passed,
    total: c.summary.total,
    published: c.published,
    events_per_second: c.events_per_second,
    batch: c.batch,
    p99_ms: c.summary.figures.p99_ms ?? null,
  };
}

const ratio = (s: BaselineSide) => (s.total > 0 ? s.passed / s.total : 0);

function shiftWords(f: FigureComparison): string {
  const iv = f.shift?.interval;
  const sign = (x: number) => `${x >= 0 ? '+' : '−'}${num(Math.abs(x), 1)}`;
  return `${LABEL[f.figure]} ${f.verdict}: median ${num(f.variant!.median, 1)} ms now, ${num(f.control!.median, 1)} ms in the baseline (${sign(f.difference!)} ms, interval ${iv ? `${sign(iv[0])} to ${sign(iv[1])} ms` : 'none'})`;
}

export function compareWithBaseline(current: ReportModel, baseline: ReportModel, opts: BaselineOptions = {}): BaselineComparison {
  const tol = opts.tolerancePct ?? 0;
  if (!(Number.isFinite(tol) && tol >= 0 && tol < 100)) throw new RangeError(`baseline tolerance must be a percentage within 0..100, got ${tol}`);
  const rows: BaselineRow[] = [];
  const seen = new Set<string>();
  for (const c of current.configurations) {
    seen.add(c.name);
    const b = baseline.configurations.find((x) => x.name === c.name);
    const cur = side(c);
    if (!b) {
      rows.push({ config: c.name, current: cur, baseline: null, verdict: 'new', flags: ['new: not in the baseline'], comparison: null });
      continue;
    }
    const base = side(b);
    const flags: string[] = [];
    let regression = false;
    let faster = false;
    const comparable = cur.events_per_second === base.events_per_second && cur.batch === base.batch;
    if (!comparable) {
      regression = true;
      flags.push(`not comparable: ${num(cur.events_per_second, 0)} ev/s at batch ${cur.batch} now, ${num(base.events_per_second, 0)} ev/s at batch ${base.batch} in the baseline`);
    }
    if (!cur.published && base.published) {
      regression = true;
      flags.push(`not published now (${c.why_not[0] ?? 'see its section'}), published in the baseline`);
    }
    if (ratio(cur) < ratio(base)) {
      regression = true;
      flags.push(`lost passes: ${cur.label} now, ${base.label} in the baseline`);
    }
    // Latencies of another rate or batch are not the same figure: no comparison to show.
    const comparison = comparable ? compareConfigurations(b, c, { minEffectPct: tol }) : null;
    for (const f of comparison?.figures ?? []) {
      if (!ALERTING.has(f.figure)) continue;
      if (f.verdict === 'worse') {
        regression = true;
        flags.push(shiftWords(f));
      } else if (f.verdict === 'better') {
        faster = true;
        flags.push(shiftWords(f));
      }
    }
    if (base.p99_ms && !cur.p99_ms) {
      regression = true;
      flags.push(`no passing repeat now; the baseline's p99 median was ${num(base.p99_ms.median, 1)} ms`);
    }
    rows.push({ config: c.name, current: cur, baseline: base, verdict: regression ? 'regression' : faster ? 'faster' : 'unchanged', flags, comparison, waits: { baseline: waitProfile(b), current: waitProfile(c) } });
  }
  for (const b of baseline.configurations) {
    if (seen.has(b.name)) continue;
    rows.push({ config: b.name, current: null, baseline: side(b), verdict: 'regression', flags: ['missing now: the baseline measured it, this campaign did not'], comparison: null });
  }
  const regressed = rows.filter((r) => r.verdict === 'regression');
  const summary = regressed.length
    ? `REGRESSION against baseline ${baseline.campaign.id}: ${regressed.map((r) => `${r.config} (${r.flags.join('; ')})`).join('; ')}.`
    : `No regression against baseline ${baseline.campaign.id} (${baseline.dates.days.join(', ') || 'undated'}): ${rows.length} configuration${rows.length === 1 ? '' : 's'} compared${tol ? ` (smallest difference that counts: ${tol} %)` : ''}.`;
  return {
    baseline_id: baseline.campaign.id,
    tolerance_pct: tol,
    baseline_manifest_sha256: baseline.evidence.manifest_sha256,
    baseline_days: baseline.dates.days,
    method: `${comparisonMethod(undefined, tol)} Only p99 and p50 (with the pass counts, publication and the configuration's shape) decide a regression; the other figures are shown for the reader.`,
    rows,
    regression: regressed.length > 0,
    summary,
  };
}

/** One row per configuration: its verdict and every finding. */
export function baselineTable(b: BaselineComparison): Table {
  return {
    header: ['configuration', 'verdict', 'passed now', 'passed in baseline', 'findings'],
    rows: b.rows.map((r) => ({
      cells: [
        r.config,
        r.verdict.toUpperCase(),
        r.current ? `${r.current.label}${r.current.published ? '' : ' (not published)'}` : '—',
        r.baseline ? `${r.baseline.label}${r.baseline.published ? '' : ' (not published)'}` : '—',
        r.flags.join('; ') || 'no difference we can see',
      ],
      cls: r.verdict === 'regression' ? 'failed' : 'passed',
    })),
  };
}

/** Figure by figure: the baseline's medians beside this campaign's, the difference with its interval, the verdict. */
export function baselineFiguresTable(b: BaselineComparison): Table | null {
  const rows = b.rows.flatMap((r) => (r.comparison ? [...comparisonRows(r.config, r.comparison), ...(r.waits ? [waitsRow(r.config, r.waits.baseline, r.waits.current)] : [])] : []));
  return rows.length ? { header: comparisonHeader({ control: 'baseline', variant: 'now' }), rows } : null;
}
