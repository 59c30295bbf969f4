// The page's tables as plain strings, built once from the model and rendered by markdown.ts,
// html.ts and text.ts alike, so the three formats can never disagree on a figure. Pure.
//
// Number formatting is written out here rather than left to toLocaleString: the output must be the
// same bytes on every machine, whatever its locale or ICU build.
import { SAMPLER_ROWS_NOTE, WAL_BYTES_MEASURE_NOTE, type WalBytesMeasure } from './wal-figure';
import type { FigureSummary } from '../../protocol/reporting';
import { shareText, type Spread, type WaitShare } from './db-summary';
import type { RunReport } from '../../protocol/run-report';
import type { CloudSummary } from '../../protocol/cloud-evidence';
import { STEAL_NOTE_PCT, stealNote } from '../../protocol/host-steal';
import { secondRanges } from '../../protocol/second-ranges';
import { DASH, ms, num, type Row, type Table } from './cells';
import type { ConfigurationModel, LadderModel, LadderRung, RepeatModel, ReportModel } from './model-types';
import { ceilingInvalidity } from './model';
import { dbCalibrationText } from './db-calibration-state';
export { DASH, ms, num, type Row, type Table } from './cells';

/** "8.2 ms (7.9–9.0)": the median, then the range when it is one. */
export function medianRange(f: FigureSummary | null, unit: string, digits = 1): string {
  if (!f) return DASH;
  const u = unit ? ` ${unit}` : '';
  const m = `${num(f.median, digits)}${u}`;
  const lo = num(f.min, digits);
  const hi = num(f.max, digits);
  return lo === hi ? m : `${m} (${lo}–${hi})`;
}

export function range(f: FigureSummary | null, unit: string, digits = 1): string {
  if (!f) return DASH;
  const u = unit ? ` ${unit}` : '';
  const lo = num(f.min, digits);
  const hi = num(f.max, digits);
  return lo === hi ? `${lo}${u}` : `${lo}–${hi}${u}`;
}

function spread(s: Spread | null, unit: string): string {
  return s ? `${num(s.median, 0)}${unit} (max ${num(s.max, 0)}${unit})` : DASH;
}

export function bytes(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return DASH;
  if (x >= 1e9) return `${num(x / 1e9, 2)} GB`;
  if (x >= 1e6) return `${num(x / 1e6, 1)} MB`;
  if (x >= 1e3) return `${num(x / 1e3, 1)} kB`;
  return `${num(x, 0)} B`;
}

export const STATUS_WORD: Record<RepeatModel['status'], string> = {
  passed: 'PASS',
  failed: 'FAIL',
  'not-judged': 'NOT JUDGED',
  invalid: 'INVALID',
  'not-published': 'NOT PUBLISHED',
  interrupted: 'INTERRUPTED',
  'not-run': 'NOT RUN',
};

export function passedLabel(c: ConfigurationModel): string {
  const s = c.summary;
  const invalid = c.repeats.filter((r) => r.status === 'invalid').length;
  const interrupted = s.interrupted - invalid;
  const extra = `${interrupted ? ` (+${interrupted} interrupted, not counted)` : ''}${invalid ? ` (+${invalid} invalid: the instrument's, not counted)` : ''}`;
  // What ran, as the campaign's closing lines say it (client/progress-view.ts): a configuration the
  // campaign stopped before reads "not run", never "0/3" (a count of passes of a service never loaded).
  const ran = c.repeats.filter((r) => r.status !== 'not-run' && r.status !== 'interrupted' && r.status !== 'invalid').length;
  const unjudged = c.repeats.filter((r) => r.status === 'not-run' && r.reasons?.[0]?.startsWith('NOT JUDGED (instrument)')).length;
  if (unjudged) return `NOT JUDGED (instrument): ${unjudged} of ${c.planned} repeat(s) with no valid attempt; passed ${s.label}${extra}`;
  // NOT JUDGED on drift, and no repeat failed: not the service's failure (lib/protocol/configuration-state.ts).
  const noVerdict = c.repeats.filter((r) => r.status === 'not-judged').map((r) => `r${r.repeat}`);
  if (noVerdict.length && !c.repeats.some((r) => r.status === 'failed')) {
    return `NOT JUDGED (drift): ${noVerdict.join(', ')} passed every other gate, the drift interval straddles the limit; passed ${s.label}${extra}`;
  }
  if (ran === 0 && c.planned > 0) return `not run (0/${c.planned} ran)${extra}`;
  if (ran < c.planned) return `${s.label}; only ${ran} of ${c.planned} ran${extra}`;
  return `${s.label}${extra}`;
}

/** One row per configuration: the spec's "At a glance". */
export function glanceTable(m: ReportModel): Table {
  const header = ['configuration', 'events/s', 'batch', 'requests/s', 'p50', 'p99', 'passed', 'worst 10-s p99', 'freeze-seconds', 'windows', 'drift'];
  const rows: Row[] = m.configurations.map((c) => {
    const f = c.summary.figures;
    const name = `${c.name}${c.kind === 'rung' ? ' (ladder rung)' : ''}: ${num(c.events_per_second, 0)} ev/s offered`;
    if (!c.published) return { cells: [name, 'not published', num(c.batch, 0), DASH, DASH, DASH, passedLabel(c), DASH, DASH, DASH, DASH], cls: 'not-published' };
    const passing = c.repeats.filter((r) => r.status === 'passed' && r.report);
    const perRepeat = (k: 'freeze_seconds' | 'windows') => {
      const xs = passing.map((r) => r.report![k].length);
      const lo = Math.min(...xs);
      const hi = Math.max(...xs);
      return xs.length > 1 && lo !== hi ? ` (${lo}–${hi} per repeat)` : '';
    };
    const drift = f.drift ? `×${range(f.drift, '', 2)}` : DASH;
    return {
      cells: [
        name,
        medianRange(f.delivered_evps ?? null, '', 0),
        num(c.batch, 0),
        medianRange(f.delivered_rps ?? null, '', 1),
        medianRange(f.p50_ms ?? null, 'ms'),
        medianRange(f.p99_ms ?? null, 'ms'),
        passedLabel(c),
        f.worst_10s_p99_ms ? `${num(f.worst_10s_p99_ms.max, 1)} ms` : DASH,
        c.freeze_seconds_total === null ? DASH : `${c.freeze_seconds_total}${perRepeat('freeze_seconds')}`,
        c.windows_total === null ? DASH : `${c.windows_total}${perRepeat('windows')}`,
        drift,
      ],
      cls: c.summary.held ? 'passed' : c.repeats.some((r) => r.status === 'not-judged') && !c.repeats.some((r) => r.status === 'failed') ? 'not-judged' : 'failed',
    };
  });
  return { header, rows };
}

const RUNG_WORD: Record<LadderRung['status'], string> = {
  held: 'held',
  'did-not-hold': 'DID NOT HOLD',
  'instrument-late': 'not judged (the generator sent late)',
  'not-published': 'not published',
  incomplete: 'incomplete (not every repeat ran)',
  'not-run': 'not run',
};
const RUNG_CLASS: Record<LadderRung['status'], string> = { held: 'passed', 'did-not-hold': 'failed', 'instrument-late': 'not-published', 'not-published': 'not-published', incomplete: 'interrupted', 'not-run': 'not-run' };

/** What the ladder figures are, in one sentence (they differ from the At-a-glance medians on purpose). */
export const LADDER_NOTE =
  "A rung's figures here are medians over every repeat that ran to its end and was reconciled, passed and failed alike, so the rungs that did not hold show what they delivered; the At-a-glance medians above stay over passing repeats only.";

/** Every rung by offered rate: delivered against offered, p50/p99, and what it was (the knee marked). */
export function ladderTable(l: LadderModel): Table {
  const header = ['rung', 'offered ev/s', 'delivered ev/s', 'delivered / offered', 'p50', 'p99', 'dropped', 'passed', 'status'];
  const rows: Row[] = l.rungs.map((r) => ({
    cells: [
      r.name,
      num(r.offered_evps, 0),
      medianRange(r.delivered_evps, '', 0),
      r.delivered_evps && r.offered_evps > 0 ? `${num((r.delivered_evps.median / r.offered_evps) * 100, 1)} %` : DASH,
      medianRange(r.p50_ms, 'ms'),
      medianRange(r.p99_ms, 'ms'),
      r.dropped === null ? DASH : num(r.dropped, 0),
      r.passed,
      `${RUNG_WORD[r.status]}${l.knee?.rung === r.name ? ' (the knee)' : ''}`,
    ],
    cls: RUNG_CLASS[r.status],
  }));
  return { header, rows };
}

/** The knee in words: the first rung that did not hold and why, the last one below it that held. */
export function kneeText(l: LadderModel): string {
  const late = l.rungs.filter((r) => r.status === 'instrument-late');
  // A rung the instrument could not judge is neither where the service held nor where it stopped.
  const lateNote = late.length ? ` Not judged, because the generator sent late (the instrument's gate alone failed): ${late.map((r) => r.name).join(', ')}.` : '';
  return kneeWords(l) + lateNote;
}

function kneeWords(l: LadderModel): string {
  const k = l.knee;
  if (!k) {
    const ran = l.rungs.filter((r) => r.status !== 'not-run');
    const top = ran[ran.length - 1];
    return top ? `No knee within the rates offered: no rung failed ${l.rungs.some((r) => r.status === 'instrument-late') ? "on the service's gates" : 'its gate'}, up to ${num(top.offered_evps, 0)} ev/s offered (${top.name}, ${RUNG_WORD[top.status]}).` : 'No rung ran.';
  }
  const rung = l.rungs.find((r) => r.name === k.rung)!;
  const below = k.last_held ? l.rungs.find((r) => r.name === k.last_held)! : null;
  return (
    `The first rung that did not hold: ${k.rung}, ${num(k.offered_evps, 0)} ev/s offered at batch ${rung.batch}, passed ${rung.passed} (${k.reasons.join('; ')}). ` +
    (below ? `The last rung below it that held: ${below.name}, ${num(below.offered_evps, 0)} ev/s.` : 'No rung below it held.')
  );
}

/** The database's wait profile of the rungs around the knee, side by side. */
export function kneeWaitsTable(l: LadderModel): Table | null {
  if (!l.knee) return null;
  const rows: Row[] = l.knee.around.map((name) => {
    const r = l.rungs.find((x) => x.name === name)!;
    const from = `${r.repeats} repeat${r.repeats === 1 ? '' : 's'}, ${r.waits.sampled} with DB samples`;
    const waits = r.waits.sampled ? requestWaitsText(r.waits.top, r.waits.samples, r.waits.snapshots) : 'not sampled';
    return { cells: [`${name}${name === l.knee!.rung ? ' (the knee)' : ''}`, num(r.offered_evps, 0), RUNG_WORD[r.status], from, waits], cls: RUNG_CLASS[r.status] };
  });
  return { header: ['rung', 'offered ev/s', 'status', 'from', REQUEST_WAITS_HEADER], rows };
}

/** The closed-loop ceiling beside the database's own floor. */
export function ceilingTable(m: ReportModel): Table | null {
  if (!m.ceiling && !m.denominator) return null;
  const header = ['what (pgbench legs in the order they ran)', 'figure', "ceiling's events/s as a share of its rows/s"];
  const rows: Row[] = [];
  const c = m.ceiling;
  if (c) {
    const what = `closed-loop maximum, ${c.workers} workers, batch ${c.batch} (not a service level)`;
    const invalid = ceilingInvalidity(c);
    if (c.status === 'measured' && c.report) {
      rows.push({ cells: [what, `${num(c.report.delivered_rate, 0)} ev/s (p50 ${ms(c.report.p50_ms)} / p99 ${ms(c.report.p99_ms)})`, DASH], cls: 'passed' });
    } else if (invalid) {
      // Its figure is not shown here, and no leg below gets a ratio from it (model.ts: buildDenominator).
      rows.push({ cells: [what, invalid, DASH], cls: 'not-published' });
    } else {
      rows.push({ cells: [what, `${c.status.replace('-', ' ')}: ${c.why.join('; ')}`, DASH], cls: c.status });
    }
  }
  const d = m.denominator;
  if (d) {
    if (!d.legs.length) rows.push({ cells: ["the database's own floor (pgbench)", 'not measured: no denominator/legs.json', DASH], cls: 'not-run' });
    for (const [i, l] of d.legs.entries()) {
      // The order the legs ran in, and whether each began settled (VACUUM + CHECKPOINT; files written
      // before issue 31 began after none, in the file's order).
      const s = l.settled_before;
      const start = !s ? 'began after no VACUUM or CHECKPOINT' : s.checkpoint.error || s.vacuum_error ? `began WITHOUT ${s.vacuum_error ? 'a VACUUM' : 'a CHECKPOINT'} (${s.vacuum_error ?? s.checkpoint.error})` : 'began after a VACUUM and a CHECKPOINT';
      const what = `${l.order ?? i + 1}. pgbench ${l.leg}: ${l.description} (${l.clients} clients, ${l.batch} row${l.batch === 1 ? '' : 's'}/transaction; ${start})`;
      // One row per transaction: its transactions/s are the database's commits/s (the protocol's "one-row commits/s").
      const rate = l.batch === 1 ? `${num(l.tps, 0)} one-row commits/s` : `${num(l.rows_per_s, 0)} rows/s (${num(l.tps, 0)} transactions/s)`;
      const fig = `${rate}${l.rows_verified ? '' : ', rows NOT verified'}`;
      rows.push({ cells: [what, fig, l.ratio === null ? DASH : `${num(l.ratio * 100, 0)} %`], cls: l.rows_verified ? 'passed' : 'not-published' });
    }
  }
  return { header, rows };
}

/** Reads under load, per endpoint (medians over passing repeats). */
export function readsTable(m: ReportModel): Table | null {
  const rows: Row[] = [];
  for (const c of m.configurations) {
    if (!c.published) continue;
    for (const r of c.reads) rows.push({ cells: [c.name, r.endpoint.replace(/^probe:/, ''), medianRange(r.p50_ms, 'ms'), medianRange(r.p99_ms, 'ms'), String(r.repeats)] });
  }
  if (!rows.length) return null;
  return { header: ['configuration', 'endpoint', 'p50', 'p99', 'passing repeats'], rows };
}

/** The header of every column of requests' waits. */
/** A database figure's header or heading, with the database calibration's mark when a case failed. */
export function dbMarked(m: Pick<ReportModel, 'db_calibration'>, heading: string): string {
  const mark = m.db_calibration?.mark;
  return mark ? `${heading} [${mark}]` : heading;
}

export const REQUEST_WAITS_HEADER = "what requests waited on (share of the service's active client backends sampled, with their count)";

/**
 * "Lock:transactionid 62 % (1,240), no wait event (on CPU or waiting to run) 30 % (600); 2,000 backend-samples in 450 snapshots":
 * each share with the backend-samples it rests on, and the whole it is a share of.
 */
export function requestWaitsText(top: readonly WaitShare[], samples?: number, snapshots?: number): string {
  const shares = top.map(shareText).join(', ') || 'none active';
  const whole = samples !== undefined && snapshots !== undefined ? `; ${num(samples, 0)} backend-samples in ${num(snapshots, 0)} snapshots` : '';
  return `${shares}${whole}`;
}

/** The database's own work beside the requests': background processes and other sessions, per configuration. */
export function ownWorkTable(m: ReportModel): Table | null {
  const rows: Row[] = [];
  for (const c of m.configurations) {
    const s = c.stops;
    if (!s.db_sampled || !s.own_work) continue;
    const work = s.own_work.map((w) => `${w.who}: ${w.event} ${num(w.mean, 2)} (${num(w.count, 0)})`).join(', ') || 'none at work';
    rows.push({ cells: [c.name, `${num(s.snapshots ?? 0, 0)} snapshots`, work] });
  }
  if (!rows.length) return null;
  return { header: ['configuration', 'from', "the database's own work and other sessions (processes at it on average per snapshot, with their backend-samples)"], rows };
}

/**
 * Which count the WAL bytes are (wal-figure.ts), beside the figure: `bytes: wal_bytes (pg_stat_wal), the
 * records' own bytes, ...`; with repeats of both measures (a folder recorded before issue 47), each with
 * its count, so a figure inflated by segment padding is never read as the records'.
 */
export function walMeasureText(ms: ReadonlyArray<{ measure: WalBytesMeasure; repeats: number }>, n: number): string {
  if (ms.length === 0) return 'bytes: measure not recorded';
  if (ms.length === 1 && ms[0].repeats === n) return `bytes: ${ms[0].measure}, ${WAL_BYTES_MEASURE_NOTE[ms[0].measure]}`;
  return `bytes: ${ms.map((m) => `${m.repeats} of ${n} by ${m.measure} (${WAL_BYTES_MEASURE_NOTE[m.measure]})`).join(', ')}`;
}

/** What stops it: wait events, WAL per event, CPU. */
export function stopsTable(m: ReportModel): Table {
  const appNode = m.configurations.some((c) => c.stops.app_node_cpu_pct !== undefined);
  const rows: Row[] = m.configurations.map((c) => {
    const s = c.stops;
    if (s.basis === 'none') return { cells: [c.name, 'no finished repeat', DASH, DASH, DASH, DASH, DASH, ...(appNode ? [DASH] : [])] };
    const basis = `${s.repeats} ${s.basis} repeat${s.repeats === 1 ? '' : 's'}`;
    const waits = s.db_sampled ? requestWaitsText(s.top_waits, s.request_samples, s.snapshots) : 'not sampled';
    // Repeats recorded before the load bracket keep the sampler-row window's figure, and say so.
    const older = s.wal_from_sampler_rows ?? 0;
    const wal = s.db_sampled && s.wal_bytes_per_event
      ? `${medianRange(s.wal_bytes_per_event, 'B', 0)}, ${medianRange(s.wal_records_per_event, 'records', 1)}, ${medianRange(s.wal_fpi_per_event, 'FPI', 2)}${
          older ? ` (${older} of ${s.wal_bytes_per_event.n} from the ${SAMPLER_ROWS_NOTE})` : ''
        }; ${walMeasureText(s.wal_bytes_measures ?? [], s.wal_bytes_per_event.n)}`
      : 'not sampled';
    return {
      cells: [
        c.name,
        basis,
        waits,
        wal,
        s.wal_mb_per_s ? medianRange(s.wal_mb_per_s, 'MB/s', 2) : s.db_sampled ? DASH : 'not sampled',
        s.db_cpu_pct ? spread(s.db_cpu_pct, ' %') : 'not sampled',
        s.host_cpu_pct ? `${spread(s.host_cpu_pct, ' %')}${s.host_iowait_pct ? `, iowait ${num(s.host_iowait_pct.median, 1)} %` : ''}` : 'not sampled',
        ...(appNode ? [s.app_node_cpu_pct ? spread(s.app_node_cpu_pct, ' %') : 'not sampled'] : []),
      ],
    };
  });
  // A rig with an app node (aws): the service's host beside the load host's, which is where the
  // generator runs there.
  const host = appNode ? 'load node CPU busy' : 'host CPU busy';
  const db = (h: string) => dbMarked(m, h);
  return { header: ['configuration', 'from', db(REQUEST_WAITS_HEADER), db('WAL per event'), db('WAL rate'), db('DB CPU'), host, ...(appNode ? ['app node CPU busy'] : [])], rows };
}

/** The hypervisor's share of the load host's CPU over the sustained repeats, and the repeats it disturbed. */
export function stealText(m: ReportModel): string {
  const seen = m.configurations
    .flatMap((c) => c.repeats)
    .flatMap((r) => (r.host?.steal_pct ? [{ id: r.id, max: r.host.steal_pct.max }] : []));
  if (!seen.length) return 'not sampled';
  const top = Math.max(...seen.map((x) => x.max));
  const hit = seen.filter((x) => x.max >= STEAL_NOTE_PCT);
  const where = hit.length ? `at or over ${STEAL_NOTE_PCT} % in ${hit.map((x) => `${x.id} (${num(x.max, 1)} %)`).join(', ')}` : `under ${STEAL_NOTE_PCT} % in every repeat`;
  return `max ${num(top, 1)} % over ${seen.length} sampled repeat${seen.length === 1 ? '' : 's'}; ${where}`;
}

/** Every attempt of one configuration, with its verdict and every failed gate's reason. */
export function runsTable(c: ConfigurationModel): Table {
  // Beside the delivered rate: what the plan scheduled and delivered, and the seconds that fell short
  // (the delivered check). Beside the gated p99 (done - sent): how late the generator sent (schedule
  // lag p99, its maximum and the late seconds, all gated by the instrument check) and the corrected
  // p99 (done - intended) that a late generator would hide.
  const header = [
    'repeat',
    'verdict',
    'delivered ev/s',
    'delivered / planned',
    'p50',
    'p99',
    'schedule lag p99',
    'max lag',
    'late seconds',
    'corrected p99',
    'worst 10-s p99',
    'freeze-s',
    'windows',
    'drift',
    'dropped',
    'failed',
    'rows (DB / claimed)',
    'host steal (max)',
    'why',
  ];
  const rows: Row[] = c.repeats.map((r) => {
    const rep = r.report;
    const label = r.attempt ? `r${r.repeat}-a${r.attempt}` : `r${r.repeat}`;
    const rowsCell = rep && rep.gate.checks.find((k) => k.name === 'rows') ? rowsOf(r) : DASH;
    const steal = r.status === 'failed' ? stealNote(r.host?.steal_pct) : null;
    const why = r.status === 'passed' ? '' : [...r.reasons, ...r.gate_reasons.map((g) => `also failed: ${g}`), ...(steal ? [steal] : [])].join('; ');
    return {
      cells: [
        label,
        STATUS_WORD[r.status],
        rep ? num(rep.delivered_rate, 0) : DASH,
        rep ? deliveryCell(rep) : DASH,
        rep ? ms(rep.p50_ms) : DASH,
        rep ? ms(rep.p99_ms) : DASH,
        rep ? ms(rep.schedule_lag_p99_ms) : DASH,
        rep ? ms(rep.schedule_lag_max_ms) : DASH,
        rep ? (rep.late_seconds.length ? `${rep.late_seconds.length} (${secondRanges(rep.late_seconds, 4)})` : '0') : DASH,
        rep ? ms(rep.co_p99_ms) : DASH,
        rep ? ms(rep.worst_10s_p99_ms) : DASH,
        rep ? String(rep.freeze_seconds.length) : DASH,
        rep ? String(rep.windows.length) : DASH,
        rep ? driftCell(rep) : DASH,
        rep ? num(rep.dropped, 0) : DASH,
        rep ? num(rep.failed, 0) : DASH,
        rowsCell,
        r.host?.steal_pct ? `${num(r.host.steal_pct.max, 1)} %` : 'not sampled',
        why,
      ],
      cls: r.status,
    };
  });
  return { header, rows };
}

/**
 * A repeat's drift with its 95 % interval as the gate compared it (lib/protocol/drift.ts):
 * `×1.59 (×0.95–×2.41)`; a verdict.json recorded before the interval shows the ratio alone.
 */
function driftCell(rep: RunReport): string {
  if (rep.drift == null) return DASH;
  if (rep.drift_low == null) return `×${num(rep.drift, 2)}`;
  const lo = Math.floor(rep.drift_low * 100 + 1e-9) / 100;
  const hi = rep.drift_high == null ? '∞' : `×${num(Math.ceil(rep.drift_high * 100 - 1e-9) / 100, 2)}`;
  return `×${num(rep.drift, 2)} (×${num(lo, 2)}–${hi})`;
}

/** The plan-based delivery of one repeat: `3000 / 3000`, with its short seconds, or why it was not judged. */
function deliveryCell(rep: RunReport): string {
  const d = rep.delivery;
  if (!d) return rep.plan ? 'closed loop: no schedule' : 'not judged: no plan';
  const short = d.short_seconds.length ? `; short s ${secondRanges(d.short_seconds, 4)}` : '';
  return `${num(d.delivered, 0)} / ${num(d.scheduled, 0)}${short}${rep.plan?.cut_short ? '; cut short' : ''}`;
}

function rowsOf(r: RepeatModel): string {
  const claimed = r.report!.events_claimed;
  const check = r.checks.find((k) => k.name === 'rows');
  if (!check || check.passed === null) return `? / ${num(claimed, 0)}`;
  const m = /rows written (\d+)/.exec(check.detail);
  return `${m ? num(Number(m[1]), 0) : '?'} / ${num(claimed, 0)}`;
}

export function conditionsTable(m: ReportModel): Table {
  const c = m.conditions;
  const rows: Row[] = [
    { cells: ['target', c.target] },
    { cells: ['hardware', c.hardware] },
    { cells: ['dates', m.dates.first ? `${m.dates.days.join(', ')} (first record ${m.dates.first}, last ${m.dates.last})` : 'no dated record in the evidence'] },
    { cells: ['protocol', c.protocol] },
    { cells: ['seed', `${num(c.seed.history_rows, 0)} history rows, ${num(c.seed.customers, 0)} customers, one tenant`] },
    { cells: ['service', c.service_build] },
    {
      cells: [
        'service settings',
        `${c.service.map(([k, v]) => `${k} ${v}`).join(', ') || 'none given'}${c.service_reported ? `; as its /healthz reported them: ${c.service_reported.map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}` : ''}`,
      ],
    },
    { cells: ['warm-up', c.warmup] },
    { cells: [`database parameters (${c.database_source})`, c.database.map(([k, v]) => `${k}=${v}`).join(', ') || DASH] },
    ...settingsRows(c),
    { cells: ['cost', costText(m)] },
    { cells: ['database calibration', dbCalibrationText(m)] },
    {
      cells: [
        'calibration',
        c.calibration
          ? `${c.calibration.calibrated ? 'CALIBRATED' : 'NOT CALIBRATED'}: ${c.calibration.cases.map((k) => `${k.name} ${k.passed ? 'ok' : 'FAIL'}`).join(', ')}`
          : m.steps.some((s) => s.step === 'calibrate')
            ? 'no calibration/calibration.json'
            : 'not run',
      ],
    },
  ];
  const floor = floorText(m);
  if (floor) rows.push({ cells: ['instrument floor', floor] });
  rows.push({ cells: ['host CPU steal', stealText(m)] });
  return { header: ['condition', 'value'], rows };
}

/**
 * The settings the database ran with, read back from pg_settings at each repeat's start: the ones every
 * page names (checksums, wal_compression, the WAL segment size, the markers' logging), then every one
 * not at its default with its source. A set that changed between repeats (a variant) is a row of its own.
 */
function settingsRows(c: ReportModel['conditions']): Row[] {
  const sets = c.settings_read_back;
  if (!sets) return [{ cells: ['database settings read back', 'not in the evidence (written before the DB sampler read pg_settings)'] }];
  return sets.flatMap((s) => {
    const which = sets.length > 1 ? ` (${s.repeats.length === 1 ? s.repeats[0] : `${s.repeats.length} repeats, ${s.repeats[0]} …`})` : '';
    return [
      { cells: [`database settings read back${which}`, s.named.map(([k, v]) => `${k}=${v}`).join(', ')] },
      { cells: [`settings not at their default${which} (pg_settings source)`, s.changed.map((x) => `${x.name}=${x.value} (${x.source})`).join(', ') || 'none'] },
    ];
  });
}

/**
 * The instrument's floor on this host (calibration case 0): what the client adds to the server's own
 * time, against a 0-ms server. Shown in Conditions and beside the At-a-glance table, since every
 * latency on the page carries it. Null when calibration did not run or predates the floor.
 */
export function floorText(m: ReportModel): string | null {
  const f = m.conditions.calibration?.floor;
  if (!f) return null;
  return `client latency minus the server's own time against a 0-ms server: p50 ${num(f.p50_ms, 2)} ms, p99 ${num(f.p99_ms, 2)} ms (${num(f.share_of_limit * 100, 1)} % of the smallest p99 limit, ${num(f.p99_limit_ms, 0)} ms; ${num(f.samples, 0)} requests)`;
}

export function costText(m: ReportModel): string {
  const c = m.conditions;
  const rate = `$${num(c.cost_per_hour, 2)}/hour${c.cost_source ? ` (prices: ${c.cost_source})` : ''}`;
  const notes = c.cost_notes?.length ? `. ${c.cost_notes.join('; ')}` : '';
  if (!c.billed) return `${rate}; total unknown (no provision step recorded)${notes}`;
  return `${rate} × ${num(c.billed.hours, 2)} h (${c.billed.basis}) = $${num(c.total_cost, 2)}${notes}`;
}

export function stepsTable(m: ReportModel): Table {
  return {
    header: ['step', 'status', 'started', 'seconds', 'summary'],
    rows: m.steps.map((s) => ({ cells: [s.step, s.status, s.started_at, num(s.seconds, 0), s.summary], cls: s.status === 'ok' ? 'passed' : s.status === 'skipped' ? 'not-run' : 'failed' })),
  };
}

/** The ceiling's state in words: measured, not a valid ceiling (invalid or not published), interrupted, not run. */
export function ceilingStatusText(c: NonNullable<ReportModel['ceiling']>): string {
  return ceilingInvalidity(c) ? 'not a valid ceiling' : c.status.replace('-', ' ');
}

/** One sentence on the ceiling's measurement. */
export function ceilingLine(r: RunReport): string {
  return `Delivered ${num(r.delivered_rate, 0)} ev/s (${num(r.delivered_rate_rps, 1)} requests/s), p50 ${ms(r.p50_ms)}, p99 ${ms(r.p99_ms)}, ${num(r.samples, 0)} samples, ${num(r.failed, 0)} failed, ${num(r.dropped, 0)} dropped.`;
}

/**
 * A repeat's "Cloud (RDS)" block (aws only): each figure with its source and period beside it, and a
 * source that could not be read shown as its error. Null when the repeat has no cloud files.
 */
/** The heading of cloudTable's table: what it holds. */
export function cloudTitle(r: RepeatModel): string {
  if (!r.cloud) return 'The app node';
  return r.app_node !== undefined ? 'Cloud (RDS) and the app node' : 'Cloud (RDS)';
}

export function cloudTable(r: RepeatModel): Table | null {
  const c = r.cloud;
  if (!c && r.app_node === undefined) return null;
  const rows: Row[] = [];
  if (c) cloudRows(c, rows);
  // The service's own host (aws app node), from the sampler that runs there all campaign long.
  if (r.app_node !== undefined) {
    const a = r.app_node;
    const source = 'app node host sampler (/proc)';
    if (!a) rows.push({ cells: ['app node CPU busy', 'not sampled: no app node sample falls in this window', source, DASH], cls: 'not-run' });
    else {
      const pct = (x: Spread | null) => (x ? spread(x, ' %') : DASH);
      rows.push({
        cells: ['app node CPU busy (steal, iowait max)', `${pct(a.cpu_busy_pct)} (${a.steal_pct ? `${num(a.steal_pct.max, 1)} %` : DASH}, ${a.iowait_pct ? `${num(a.iowait_pct.max, 1)} %` : DASH})`, source, `${a.rows} samples, ${num(a.coverage_pct, 1)} % of the window${a.errors ? `, ${a.errors} sampler error(s)` : ''}`],
        ...(a.coverage_pct < 90 ? { cls: 'failed' } : {}),
      });
    }
  }
  return { header: ['figure', 'value', 'source', 'period'], rows };
}

function cloudRows(c: CloudSummary, rows: Row[]): void {
  const failed = (what: string, p: { error: string; source: string }) => rows.push({ cells: [what, `could not be read: ${p.error}`, p.source, DASH], cls: 'failed' });
  const missing = (what: string, file: string) => rows.push({ cells: [what, `not in the evidence (no ${file})`, DASH, DASH], cls: 'not-run' });
  const pct = (x: number | null) => (x === null ? DASH : `${num(x, 1)} %`);
  if (!c.rds) missing('CloudWatch AWS/RDS', 'cloud-rds-metrics.json');
  else if ('error' in c.rds) failed('CloudWatch AWS/RDS', c.rds);
  else {
    const s = c.rds.ok;
    const period = `${c.rds.period}${s.complete ? '' : ' (incomplete: CloudWatch had not published the last minute)'}`;
    const src = c.rds.source;
    rows.push({ cells: ['RDS CPU', `mean ${pct(s.cpu_mean_pct)}, max ${pct(s.cpu_max_pct)}`, src, period] });
    rows.push({ cells: ['read / write IOPS (mean)', `${num(s.read_iops_mean, 0)} / ${num(s.write_iops_mean, 0)}`, src, period] });
    rows.push({ cells: ['disk queue depth (max)', num(s.queue_depth_max, 2), src, period] });
    rows.push({ cells: ['read / write latency (mean)', `${ms(s.read_latency_mean_ms)} / ${ms(s.write_latency_mean_ms)}`, src, period] });
    rows.push({ cells: ['freeable memory (min)', bytes(s.freeable_memory_min_bytes), src, period] });
  }
  if (!c.os) missing('Enhanced Monitoring', 'cloud-os-metrics.json');
  else if ('error' in c.os) failed('Enhanced Monitoring', c.os);
  else {
    const s = c.os.ok;
    const period = `${c.os.period}, ${num(s.samples, 0)} samples${s.unreadable ? ` (+${s.unreadable} unreadable)` : ''}`;
    rows.push({ cells: ['OS CPU steal / I/O wait (max)', `${pct(s.steal_max_pct)} / ${pct(s.wait_max_pct)}`, c.os.source, period] });
  }
  if (!c.load) missing('Performance Insights', 'cloud-db-load.json');
  else if ('error' in c.load) failed('Performance Insights', c.load);
  else {
    const s = c.load.ok;
    const top = s.top.length ? s.top.map((t) => `${t.event} ${num(t.mean, 2)}`).join(', ') : 'no wait event recorded';
    rows.push({ cells: ['db.load by wait event (top 3, mean active sessions)', `${top}${s.mean_total === null ? '' : `; all events ${num(s.mean_total, 2)}`}`, c.load.source, c.load.period] });
  }
}
