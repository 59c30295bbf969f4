// Two configurations of the report model side by side (a baseline campaign's and this one's; later a
// campaign's control and treatment), through lib/protocol/compare.ts. This file only picks each
// repeat's figures out of the model and lays the result out as a table. Pure.
import { COMPARED_FIGURES, compareRepeats, methodWords, type CompareOptions, type FigureComparison, type RepeatComparison } from '../../protocol/compare';
import type { RepeatFigures } from '../../protocol/reporting';
import { QUIET_STEAL_PCT, quietP50Applies } from '../../protocol/host-quiet';
import { notCounted, type ConfigurationModel, type RepeatModel } from './model-types';
import { num, type Row, type Table } from './cells';
import { shareText } from './db-summary';

/** What a configuration's requests waited on (top three, each with its backend-samples), as the "what stops it" table has them. */
export function waitProfile(c: ConfigurationModel | undefined): string {
  if (!c || !c.stops.db_sampled) return 'not sampled';
  return c.stops.top_waits.slice(0, 3).map(shareText).join(', ') || 'none active';
}

/** The wait-profile row a comparison table carries under a pair's figures. */
export function waitsRow(config: string, control: string, variant: string): Row {
  return { cells: [config, 'what requests waited on', control, variant, '—', '—', "DB sampler, share of the service's active client backends (backend-samples)"] };
}

/**
 * The figures of one repeat that a comparison reads (keys as COMPARED_FIGURES), and `p50_quiet_ms`: its
 * p50 over the seconds its host's CPU steal stayed low (lib/protocol/host-quiet.ts; null when too few
 * were, absent without host samples).
 */
export function repeatFigures(r: RepeatModel): RepeatFigures {
  const rep = r.report;
  return {
    passed: r.status === 'passed',
    // Not counted, as the page counts them (model-types' notCounted): counting an invalid attempt called
    // a treatment's 5 passes of 5 "lost passes" (5/6) beside 5/5.
    interrupted: notCounted(r.status),
    figures: rep
      ? {
          p50_ms: rep.p50_ms,
          p99_ms: rep.p99_ms,
          worst_10s_p99_ms: rep.worst_10s_p99_ms,
          freeze_seconds: rep.freeze_seconds.length,
          dropped: rep.dropped,
          wal_bytes_per_event: r.db?.wal?.bytes_per_event ?? null,
          ...(r.quiet ? { p50_quiet_ms: r.quiet.p50_ms } : {}),
        }
      : {},
  };
}

/** Whether a comparison of these sides reads p50 over the quiet seconds (host-quiet.ts quietP50Applies, each side a group). */
export function quietP50Comparable(...sides: ReadonlyArray<readonly RepeatFigures[]>): boolean {
  return quietP50Applies(sides.map((s) => s.filter((r) => r.passed && !r.interrupted).map((r) => r.figures.p50_quiet_ms)));
}

/**
 * Control beside variant, figure by figure, over their repeats. p50 is the quiet seconds' when both
 * sides can give it (quietP50Comparable): steal is time the hypervisor gave another machine, which no
 * build causes, and it is the largest noise a repeat's p50 carries on a shared VM (host-quiet.ts). A
 * repeat with too few quiet seconds then has no p50 in the comparison (its other figures stay).
 */
export function compareConfigurations(control: ConfigurationModel, variant: ConfigurationModel, opts: CompareOptions = {}): RepeatComparison {
  const c = control.repeats.map(repeatFigures);
  const v = variant.repeats.map(repeatFigures);
  if (!quietP50Comparable(c, v)) return compareRepeats(c, v, opts);
  const quietly = (r: RepeatFigures): RepeatFigures => ({ ...r, figures: { ...r.figures, p50_ms: r.figures.p50_quiet_ms ?? null } });
  const setAside = [...c, ...v].filter((r) => r.passed && !r.interrupted && r.figures.p50_quiet_ms === null).length;
  return { ...compareRepeats(c.map(quietly), v.map(quietly), opts), p50_basis: { quiet_steal_below_pct: QUIET_STEAL_PCT, repeats_without: setAside } };
}

const meta = (key: string) => COMPARED_FIGURES.find((f) => f.key === key) ?? { key, label: key, unit: '' };

function digits(unit: string): number {
  return unit === 'ms' ? 1 : 0;
}

function sideCell(f: FigureComparison, which: 'control' | 'variant'): string {
  const s = f[which];
  if (!s) return '—';
  const { unit } = meta(f.figure);
  const d = digits(unit);
  const u = unit ? ` ${unit}` : '';
  const lo = num(s.min, d);
  const hi = num(s.max, d);
  return `${num(s.median, d)}${u}${lo === hi ? '' : ` (${lo}–${hi})`}, ${s.n} repeat${s.n === 1 ? '' : 's'}`;
}

/** "+1.2", "−0.4", and "±0.0" for what rounds to zero (never "−0.0"). */
function signed(x: number, d: number): string {
  const s = num(Math.abs(x), d);
  return `${/[1-9]/.test(s) ? (x > 0 ? '+' : '−') : '±'}${s}`;
}

function differenceCell(f: FigureComparison): string {
  if (f.difference === null || !f.control) return '—';
  const { unit } = meta(f.figure);
  const d = digits(unit);
  const u = unit ? ` ${unit}` : '';
  const pct = f.control.median !== 0 ? ` (${signed((f.difference / Math.abs(f.control.median)) * 100, 0)} %)` : '';
  const iv = f.shift?.interval;
  return `${signed(f.difference, d)}${u}${pct}; interval ${iv ? `${signed(iv[0], d)} to ${signed(iv[1], d)}${u}` : 'none (too few repeats)'}`;
}

/** The method cell: p50's says when it is over the quiet seconds, and how many repeats had too few. */
function methodCell(f: FigureComparison, cmp: RepeatComparison): string {
  const b = cmp.p50_basis;
  const words = methodWords(f, cmp.level);
  if (f.figure !== 'p50_ms' || !b) return words;
  return `${words}; p50 over the seconds of host CPU steal under ${b.quiet_steal_below_pct} %${b.repeats_without ? ` (${b.repeats_without} repeat${b.repeats_without === 1 ? '' : 's'} with too few left out)` : ''}`;
}

/** The table's rows for one pair of configurations (the first cell is the configuration's name). */
export function comparisonRows(config: string, cmp: RepeatComparison): Row[] {
  const passes: Row = {
    cells: [config, 'passed', cmp.control.label, cmp.variant.label, '—', cmp.lost_passes ? 'lost passes' : 'no pass lost', 'counts'],
    cls: cmp.lost_passes ? 'failed' : 'passed',
  };
  const figures = cmp.figures.map((f) => ({
    cells: [config, meta(f.figure).label, sideCell(f, 'control'), sideCell(f, 'variant'), differenceCell(f), f.words, methodCell(f, cmp)],
    cls: f.verdict === 'worse' ? 'failed' : f.verdict === 'better' ? 'passed' : f.verdict === 'not-compared' ? 'not-run' : undefined,
  }));
  return [passes, ...figures].map((r) => (r.cls ? r : { cells: r.cells }));
}

export function comparisonHeader(labels: { control: string; variant: string }): string[] {
  return ['configuration', 'figure', `${labels.control}: median (min–max)`, `${labels.variant}: median (min–max)`, `difference (${labels.variant} − ${labels.control}), interval`, 'verdict', 'method'];
}

/** The comparison table of two configurations (control first), e.g. a campaign's control beside a treatment. */
export function comparisonTable(control: ConfigurationModel, variant: ConfigurationModel, opts: CompareOptions & { labels?: { control: string; variant: string } } = {}): Table {
  const labels = opts.labels ?? { control: 'control', variant: 'variant' };
  const name = control.name === variant.name ? control.name : `${control.name} / ${variant.name}`;
  return { header: comparisonHeader(labels), rows: comparisonRows(name, compareConfigurations(control, variant, opts)) };
}
