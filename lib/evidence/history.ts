// The runs of a spec or a schedule, read from their evidence folders (`rig history`, issue 36): each
// folder's result.json (the campaign's recorded repeat verdicts: p50, p99, worst 10-s p99, passes),
// rig.json (hardware, the service's build), the repeats' load.json (the host) and db-samples.jsonl
// with reconcile.json (WAL per event, as the page computes it), the ceiling's load.json (its batch)
// and denominator/legs.json (the leg of that batch). The figures are the ones the campaign recorded,
// not re-derived from the sample streams (that is `rig report`, one run at a time): a history of
// thirty runs reads in well under a second.
import fs from 'node:fs';
import path from 'node:path';
import { quietP50OfRepeat } from './quiet-p50';
import { quietP50Applies } from '../protocol/host-quiet';
import { DENOMINATOR_FILE, RESULT_FILE, RIG_FILE, SERVICE_FILE } from './layout';
import type { DbSampleRow, DenominatorFile, LoadFile, ReconcileFile, RigFile, ServiceFile } from './records';
import { summarizeDb } from './report/db-summary';
import type { CampaignResult, RepeatSummary } from '../protocol/campaign-result';
import { campaignIdOf } from '../protocol/campaign-id';
import { buildLabel, type HistoryRun, type RunConfiguration } from '../protocol/history-series';

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

function readJsonLines<T>(file: string): T[] | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A torn last line (a sampler killed mid-write) is not a row.
    }
  }
  return out;
}

const median = (v: number[]): number | null => {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};
const nums = (v: Array<number | null | undefined>) => v.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));

/** WAL bytes per event of one repeat, as the page computes it (db-summary.ts), or null without DB samples. */
function walPerEventOf(dir: string, r: RepeatSummary): number | null {
  const rows = readJsonLines<DbSampleRow>(path.join(dir, r.dir, 'db-samples.jsonl'));
  if (!rows || rows.length < 2) return null;
  const load = readJson<LoadFile>(path.join(dir, r.dir, 'load.json'));
  const reconcile = readJson<ReconcileFile>(path.join(dir, r.dir, 'reconcile.json'));
  const events = reconcile?.rows_written ?? null;
  return summarizeDb(rows, load?.started_at ?? null, events).wal?.bytes_per_event ?? null;
}

/**
 * The passing repeats' p50s: over the seconds of low host steal (./quiet-p50.ts) when every one of them
 * has host samples to say which those were, as a comparison reads p50 (report/comparison.ts), else
 * over every second. Steal is time the hypervisor gave another VM: a week whose repeats met more of it
 * is no slower a build (docs/benchmarks.md, "What moves a repeat's p50"). A repeat with too few quiet
 * seconds has no p50 then; the run's is the median of the others (of every second's, when none had enough).
 */
function runP50s(dir: string, passing: readonly RepeatSummary[]): number[] {
  const quiet = passing.map((r) => quietP50OfRepeat(path.join(dir, r.dir)));
  // A run none of whose repeats had enough quiet seconds keeps its p50 over every second: a week the
  // host disturbed throughout is still a week of the series, not a gap in it.
  return quietP50Applies([quiet]) ? nums(quiet) : nums(passing.map((r) => r.p50Ms));
}

/**
 * One campaign folder as a run of its history; null when it holds no result.json (still running, or
 * not a campaign). `visibleBuild` is the worker build visibility names; without one (an unversioned
 * worker), rig.json's.
 */
export function readHistoryRun(dir: string, visibleBuild: string | null = null): HistoryRun | null {
  const result = readJson<CampaignResult>(path.join(dir, RESULT_FILE));
  if (!result || !Array.isArray(result.repeats) || !Array.isArray(result.configurations)) return null;
  const rig = readJson<RigFile>(path.join(dir, RIG_FILE));
  const counted = result.repeats.filter((r) => r.kind === 'sustained');
  const configurations: RunConfiguration[] = result.configurations.map((c) => {
    const passing = counted.filter((r) => r.configuration === c.name && r.passed);
    // Each passing repeat's figures (the run's are their medians): the first-run step test asks them to agree.
    const repeats = {
      p50_ms: runP50s(dir, passing),
      p99_ms: nums(passing.map((r) => r.p99Ms)),
      worst_10s_p99_ms: nums(passing.map((r) => r.worst10sP99Ms)),
      wal_bytes_per_event: nums(passing.map((r) => walPerEventOf(dir, r))),
    };
    return {
      name: c.name,
      eventsPerSecond: c.eventsPerSecond,
      batch: c.batch,
      passed: c.passed,
      total: c.total,
      p50_ms: median(repeats.p50_ms),
      p99_ms: median(repeats.p99_ms),
      worst_10s_p99_ms: median(repeats.worst_10s_p99_ms),
      wal_bytes_per_event: median(repeats.wal_bytes_per_event),
      repeats,
    };
  });
  // The ceiling counts only when valid (the page's rule: no failed request, reconciled).
  const c = result.ceiling;
  const ceilingValid = c !== undefined && c.reconciled && c.failed === 0 && c.samples > 0;
  const ceiling_evps = ceilingValid ? c.deliveredRate : null;
  let ceiling_share: number | null = null;
  if (ceilingValid) {
    const batch = readJson<LoadFile>(path.join(dir, c.dir, 'load.json'))?.batch;
    const legs = readJson<DenominatorFile>(path.join(dir, DENOMINATOR_FILE))?.legs ?? [];
    // Only a verified leg of the ceiling's own row shape (rows per transaction = its batch) is its denominator.
    const leg = legs.find((l) => l.rows_verified && l.batch === batch && l.rows_per_s > 0);
    if (leg) ceiling_share = Math.round((c.deliveredRate / leg.rows_per_s) * 1000) / 1000;
  }
  const firstRepeat = counted[0] ?? c;
  const host = firstRepeat ? (readJson<LoadFile>(path.join(dir, firstRepeat.dir, 'load.json'))?.host ?? null) : null;
  const started = result.steps?.[0]?.startedAt ?? '';
  const serviceBuild = rig?.serviceBuild ?? null;
  const rigBuild = visibleBuild ?? rig?.rigBuild ?? null;
  const reportedBuild = readJson<ServiceFile>(path.join(dir, SERVICE_FILE))?.build ?? null;
  return {
    campaignId: result.campaignId,
    dir,
    started,
    status: result.status,
    target: result.target,
    build: buildLabel(serviceBuild, rigBuild, reportedBuild),
    rigBuild,
    serviceBuild,
    reportedBuild,
    host,
    hardware: rig?.hardware ?? null,
    ceiling_evps,
    ceiling_share,
    configurations,
  };
}

/** A schedule's run: the workflow id a schedule gives it is `<schedule>-<RFC 3339 time>`, made a folder name. */
export function isScheduledRunOf(campaignId: string, schedule: string): boolean {
  const prefix = `${campaignIdOf(schedule)}-`;
  return campaignId.startsWith(prefix) && /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}/.test(campaignId.slice(prefix.length));
}

export interface FoundRuns {
  runs: HistoryRun[];
  /** Campaign ids named (by visibility) whose folder is not in this results folder, or holds no result yet. */
  missing: string[];
}

/**
 * The runs of NAME in a results folder: every campaign folder whose result.json names the spec NAME,
 * or whose id is a run of the schedule NAME, or whose id `ids` lists (what visibility said ran for
 * the schedule, with the worker build id of each).
 */
export function findHistoryRuns(results: string, name: string, ids: ReadonlyMap<string, string | null> = new Map()): FoundRuns {
  const runs: HistoryRun[] = [];
  const seen = new Set<string>();
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(results);
  } catch {
    entries = [];
  }
  const byFolder = new Map([...ids].map(([id, build]) => [campaignIdOf(id), build] as const));
  for (const entry of entries.sort()) {
    const dir = path.join(results, entry);
    const named = byFolder.has(entry) || isScheduledRunOf(entry, name);
    const result = readJson<Pick<CampaignResult, 'name'>>(path.join(dir, RESULT_FILE));
    if (!named && result?.name !== name) continue;
    const run = readHistoryRun(dir, byFolder.get(entry) ?? null);
    if (!run) continue;
    runs.push(run);
    seen.add(entry);
  }
  const missing = [...byFolder.keys()].filter((f) => !seen.has(f)).sort();
  return { runs, missing };
}
