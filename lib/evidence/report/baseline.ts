// The weekly regression check: this campaign against a baseline campaign, configuration by
// configuration (matched by name). Pure: two report models in, a comparison out.
//
// A configuration REGRESSED when:
//   - it lost passes: its pass ratio (N/M) is below the baseline's (4/5 after 5/5);
//   - its p99 median moved above the baseline's min–max range of passing repeats;
//   - it is not published now but was in the baseline, or it is missing now;
//   - it cannot be compared (another rate or batch under the same name): a schedule that can no
//     longer vouch for a configuration must say so as loudly as a regression.
// A p99 median BELOW the baseline's range is flagged as "faster than the baseline's range" but is
// not a regression (nothing got worse; the baseline may need renewing). New configurations are noted.
//
// tolerancePct (default 0: the rule exactly as stated) widens the baseline's range by that share on
// each side before the p99 comparison. With few repeats the min–max range of one week is narrow, and
// run-to-run noise alone can put next week's median just outside it; a schedule that alerts a human
// may want a few percent of slack. The page states the tolerance used.
export interface BaselineOptions {
  tolerancePct?: number;
}
import type { FigureSummary } from '../../protocol/reporting';
import type { ConfigurationModel, ReportModel } from './model';
import { num, range, type Table } from './tables';

export interface BaselineSide {
  label: string;
  passed: number;
  total: number;
  published: boolean;
  events_per_second: number;
  batch: number;
  p99_ms: FigureSummary | null;
}

export interface BaselineRow {
  config: string;
  current: BaselineSide | null;
  baseline: BaselineSide | null;
  verdict: 'unchanged' | 'regression' | 'faster' | 'new';
  /** Every finding, in words. */
  flags: string[];
}

export interface BaselineComparison {
  baseline_id: string;
  tolerance_pct: number;
  baseline_manifest_sha256: string;
  baseline_days: string[];
  rows: BaselineRow[];
  regression: boolean;
  summary: string;
}

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

export function compareWithBaseline(current: ReportModel, baseline: ReportModel, opts: BaselineOptions = {}): BaselineComparison {
  const tol = opts.tolerancePct ?? 0;
  if (!(Number.isFinite(tol) && tol >= 0 && tol < 100)) throw new RangeError(`baseline tolerance must be a percentage within 0..100, got ${tol}`);
  const slack = tol ? ` + ${tol} % tolerance` : '';
  const rows: BaselineRow[] = [];
  const seen = new Set<string>();
  for (const c of current.configurations) {
    seen.add(c.name);
    const b = baseline.configurations.find((x) => x.name === c.name);
    const cur = side(c);
    if (!b) {
      rows.push({ config: c.name, current: cur, baseline: null, verdict: 'new', flags: ['new: not in the baseline'] });
      continue;
    }
    const base = side(b);
    const flags: string[] = [];
    let regression = false;
    let faster = false;
    if (cur.events_per_second !== base.events_per_second || cur.batch !== base.batch) {
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
    if (cur.p99_ms && base.p99_ms) {
      if (cur.p99_ms.median > base.p99_ms.max * (1 + tol / 100)) {
        regression = true;
        flags.push(`p99 median ${num(cur.p99_ms.median, 1)} ms is above the baseline's range ${range(base.p99_ms, 'ms')}${slack}`);
      } else if (cur.p99_ms.median < base.p99_ms.min * (1 - tol / 100)) {
        faster = true;
        flags.push(`p99 median ${num(cur.p99_ms.median, 1)} ms is below (faster than) the baseline's range ${range(base.p99_ms, 'ms')}${slack}`);
      }
    } else if (base.p99_ms && !cur.p99_ms) {
      regression = true;
      flags.push(`no passing repeat now; the baseline's p99 range was ${range(base.p99_ms, 'ms')}`);
    }
    rows.push({ config: c.name, current: cur, baseline: base, verdict: regression ? 'regression' : faster ? 'faster' : 'unchanged', flags });
  }
  for (const b of baseline.configurations) {
    if (seen.has(b.name)) continue;
    rows.push({ config: b.name, current: null, baseline: side(b), verdict: 'regression', flags: ['missing now: the baseline measured it, this campaign did not'] });
  }
  const regressed = rows.filter((r) => r.verdict === 'regression');
  const summary = regressed.length
    ? `REGRESSION against baseline ${baseline.campaign.id}: ${regressed.map((r) => `${r.config} (${r.flags.join('; ')})`).join('; ')}.`
    : `No regression against baseline ${baseline.campaign.id} (${baseline.dates.days.join(', ') || 'undated'}): ${rows.length} configuration${rows.length === 1 ? '' : 's'} compared${tol ? ` (p99 tolerance ${tol} %)` : ''}.`;
  return {
    baseline_id: baseline.campaign.id,
    tolerance_pct: tol,
    baseline_manifest_sha256: baseline.evidence.manifest_sha256,
    baseline_days: baseline.dates.days,
    rows,
    regression: regressed.length > 0,
    summary,
  };
}

export function baselineTable(b: BaselineComparison): Table {
  return {
    header: ['configuration', 'verdict', 'passed now', 'passed in baseline', 'p99 now (median)', 'baseline p99 range', 'findings'],
    rows: b.rows.map((r) => ({
      cells: [
        r.config,
        r.verdict.toUpperCase(),
        r.current ? `${r.current.label}${r.current.published ? '' : ' (not published)'}` : '—',
        r.baseline ? `${r.baseline.label}${r.baseline.published ? '' : ' (not published)'}` : '—',
        r.current?.p99_ms ? `${num(r.current.p99_ms.median, 1)} ms` : '—',
        r.baseline?.p99_ms ? range(r.baseline.p99_ms, 'ms') : '—',
        r.flags.join('; ') || 'within the baseline',
      ],
      cls: r.verdict === 'regression' ? 'failed' : 'passed',
    })),
  };
}
