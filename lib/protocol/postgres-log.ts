// The markers a repeat's Postgres log slice carries, with the interval of activity each one stands
// for, so a tail can be set beside them (tail-attribution.ts). Pure: text in, markers out.
//
// The rig's clusters log with `log_autovacuum_min_duration = 0`, `log_checkpoints = on` and
// `log_timezone = UTC` (lib/targets/local/pg-cluster.ts; RDS's parameter group is given the same). What PostgreSQL 15 writes for them
// (src/backend/access/heap/vacuumlazy.c, commands/analyze.c, access/transam/xlog.c):
//
//   <stamp> LOG:  automatic vacuum of table "db.public.t": index scans: 0
//   	pages: 0 removed, 443 remain, 443 scanned (100.00% of total)
//   	...
//   	buffer usage: 905 hits, 0 misses, 12 dirtied
//   	system usage: CPU: user: 0.01 s, system: 0.00 s, elapsed: 0.04 s
//   <stamp> LOG:  automatic analyze of table "db.public.t"
//   	... system usage: CPU: user: 0.03 s, system: 0.00 s, elapsed: 0.04 s
//   <stamp> LOG:  checkpoint starting: time
//   <stamp> LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added, 0 removed,
//                 0 recycled; write=0.002 s, sync=0.001 s, total=0.010 s; sync files=2, ...
//
// A vacuum or analyze line is written when the pass ENDS: its start is the stamp minus `elapsed`.
// A checkpoint's write phase is paced over checkpoint_completion_target of its interval, so the whole
// checkpoint is no burst; its burst is the sync phase (every file it wrote fsynced), which ends at
// "checkpoint complete" and lasts `sync=` seconds. An immediate checkpoint (flags "immediate") writes
// at full speed, so all of it, `total=` seconds, counts.
//
// Stamps: the local cluster's default prefix `%m [%p] ` ("2026-05-01 12:00:03.123 UTC [1234] ") and
// RDS's `%t:%r:%u@%d:[%p]:` ("2026-05-01 12:00:03 UTC:10.0.1.5(40000):user@db:[4100]:") both start
// with the time and its zone. Zones read from the stamp alone: UTC, GMT, Z and numeric offsets. Any
// other abbreviation (CET, EST) is PostgreSQL's for the cluster's `log_timezone`, which abbreviations
// alone do not name (CST is three zones): given that zone (pg_settings, read back into the evidence by
// the DB sampler), the stamp's wall time is converted through the time zone database (Intl); without
// it, or in the hour a zone repeats when its clocks go back and the abbreviation does not tell which,
// the line is counted in `unplaced`, never guessed.

export type MarkerKind = 'vacuum' | 'analyze' | 'checkpoint';

export interface LogMarker {
  kind: MarkerKind;
  /** The marker's first line as written (continuation lines dropped). */
  line: string;
  /** The activity this marker stands for, epoch ms, [from, to]. */
  from_ms: number;
  to_ms: number;
  /** Short words for the page: `vacuum public.usage_events 3.20 s, 48,211 pages dirtied`. */
  detail: string;
  /** A vacuum or analyze pass's table as the log names it (`public.usage_events`), or its relname. */
  table?: string;
}

/** How a log is read: the cluster's log_timezone, for stamps in a named zone. */
export interface LogReading {
  timeZone?: string | null;
}

export interface LogEntry {
  /** Epoch ms of the stamp; null when its zone could not be read. */
  at_ms: number | null;
  /** The first line as written. */
  line: string;
  /** The message after `LOG:  ` (or the severity), continuation lines joined by '\n'. */
  message: string;
}

const STAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?) ?(UTC|GMT|Z|[+-]\d{2}(?::?\d{2})?)?(?=[\s:[]|$)/;
const SEVERITY = /\b(?:LOG|WARNING|ERROR|FATAL|PANIC|NOTICE|INFO|DEBUG\d?|DETAIL|HINT|STATEMENT|CONTEXT):\s+/;

function zoneOffsetMs(zone: string): number | null {
  if (zone === 'UTC' || zone === 'GMT' || zone === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return null;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) * 60_000;
}

const offsetFormats = new Map<string, Intl.DateTimeFormat | null>();
function offsetFormat(timeZone: string, name: 'longOffset' | 'short'): Intl.DateTimeFormat | null {
  const key = `${timeZone}\t${name}`;
  if (!offsetFormats.has(key)) {
    try {
      offsetFormats.set(key, new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: name }));
    } catch {
      offsetFormats.set(key, null); // a zone the time zone database does not know ('localtime', a POSIX rule)
    }
  }
  return offsetFormats.get(key)!;
}

const zoneName = (f: Intl.DateTimeFormat, at: number) => f.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? '';

/** The zone's offset from UTC at an instant, ms; null for a zone the time zone database does not know. */
export function zoneOffsetAt(timeZone: string, atMs: number): number | null {
  const f = offsetFormat(timeZone, 'longOffset');
  if (!f) return null;
  const m = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(zoneName(f, atMs));
  if (!m) return null;
  if (!m[1]) return 0;
  return (m[1] === '-' ? -1 : 1) * ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0)) * 1000;
}

/**
 * The instant a wall-clock time in `timeZone` stands for (wall time given as if it were UTC, ms). In
 * the hour a zone repeats, the abbreviation PostgreSQL wrote picks the one whose name it is; null when
 * it does not (or for a time the zone skips, or a zone unknown).
 */
export function wallToEpoch(wallMs: number, timeZone: string, abbreviation = ''): number | null {
  const offsets = [zoneOffsetAt(timeZone, wallMs - 14 * 3_600_000), zoneOffsetAt(timeZone, wallMs + 14 * 3_600_000), zoneOffsetAt(timeZone, wallMs)];
  if (offsets.some((o) => o === null)) return null;
  const candidates = [...new Set((offsets as number[]).map((o) => wallMs - o))].filter((t) => zoneOffsetAt(timeZone, t) === wallMs - t);
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) return null;
  const short = offsetFormat(timeZone, 'short');
  const named = short ? candidates.filter((t) => zoneName(short, t) === abbreviation) : [];
  return named.length === 1 ? named[0] : null;
}

/**
 * A log line's stamp as epoch ms; null for a continuation line or an unreadable zone. A stamp in a
 * named zone (CET) is placed through `timeZone`, the cluster's log_timezone.
 */
export function stampOf(line: string, timeZone?: string | null): { at_ms: number | null } | null {
  const m = STAMP.exec(line);
  if (!m) return null;
  // A zone abbreviation other than those above (CET, PDT): the regexp stops before it.
  const zone = m[3] ?? /^\s?([A-Za-z]{2,6})\b/.exec(line.slice(m[0].length))?.[1] ?? '';
  const local = Date.parse(`${m[1]}T${m[2]}Z`);
  if (Number.isNaN(local)) return { at_ms: null };
  const off = zoneOffsetMs(zone);
  if (off !== null) return { at_ms: local - off };
  return { at_ms: timeZone ? wallToEpoch(local, timeZone, zone) : null };
}

/** The slice as entries: a stamped line and the tab-indented lines that continue it. */
export function parseLogEntries(text: string, reading: LogReading = {}): { entries: LogEntry[]; unplaced: number } {
  const entries: LogEntry[] = [];
  let unplaced = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line) continue;
    const st = stampOf(line, reading.timeZone);
    if (st) {
      const sev = SEVERITY.exec(line);
      entries.push({ at_ms: st.at_ms, line, message: sev ? line.slice(sev.index + sev[0].length) : line });
      if (st.at_ms === null) unplaced++;
    } else if (entries.length) {
      entries[entries.length - 1].message += `\n${line.trim()}`;
    }
  }
  return { entries, unplaced };
}

const seconds = (message: string, key: string): number | null => {
  const m = new RegExp(`${key}[=:] ?(\\d+(?:\\.\\d+)?) s`).exec(message);
  return m ? Number(m[1]) : null;
};
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * The markers of a log slice. Vacuum and analyze passes from their completion lines (their start
 * back-computed from `elapsed`); checkpoints from "checkpoint complete" (sync phase, or the whole of an
 * immediate one, whose flags are on the "checkpoint starting" line before it). A "checkpoint
 * starting" with no completion in the slice (still running when the window closed) is no marker: its
 * sync phase, the part that stalls, had not happened.
 */
export function logMarkers(text: string, reading: LogReading = {}): { markers: LogMarker[]; unplaced: number } {
  const { entries, unplaced } = parseLogEntries(text, reading);
  const markers: LogMarker[] = [];
  let startFlags: string | null = null;
  for (const e of entries) {
    if (e.at_ms === null) continue;
    const first = e.message.split('\n')[0];
    const pass = /^automatic (aggressive )?(vacuum|analyze)(?: to prevent wraparound)? of table "(?:[^".]+\.)?([^"]+)"/.exec(first);
    if (pass) {
      const kind = pass[2] as 'vacuum' | 'analyze';
      const elapsed = seconds(e.message, 'elapsed') ?? 0;
      const dirtied = /(\d+) dirtied/.exec(e.message)?.[1];
      markers.push({
        kind,
        line: e.line,
        from_ms: e.at_ms - Math.round(elapsed * 1000),
        to_ms: e.at_ms,
        detail: `${pass[1] ? 'aggressive ' : ''}${kind} ${pass[3]} ${elapsed.toFixed(2)} s${dirtied ? `, ${thousands(Number(dirtied))} pages dirtied` : ''}`,
        table: pass[3],
      });
      continue;
    }
    const starting = /^(checkpoint|restartpoint) starting:(.*)$/.exec(first);
    if (starting) {
      startFlags = starting[2].trim();
      continue;
    }
    if (/^(checkpoint|restartpoint) complete:/.test(first)) {
      const total = seconds(e.message, 'total') ?? 0;
      const sync = seconds(e.message, 'sync') ?? 0;
      const immediate = startFlags !== null && /\bimmediate\b/.test(startFlags);
      const span = immediate ? total : sync;
      const wrote = /wrote (\d+) buffers/.exec(e.message)?.[1];
      const added = /(\d+) WAL file\(s\) added/.exec(e.message)?.[1];
      markers.push({
        kind: 'checkpoint',
        line: e.line,
        from_ms: e.at_ms - Math.round(span * 1000),
        to_ms: e.at_ms,
        detail: `checkpoint${startFlags ? ` (${startFlags})` : ''} ${immediate ? `immediate, total ${total.toFixed(2)} s` : `sync ${sync.toFixed(2)} s of ${total.toFixed(2)} s`}${wrote ? `, ${thousands(Number(wrote))} buffers` : ''}${added && added !== '0' ? `, ${added} WAL file(s) added` : ''}`,
      });
      startFlags = null;
    }
  }
  return { markers, unplaced };
}
