// Reads a campaign folder for the report: the manifest first (any listed file that differs stops
// everything, naming it), then ONLY the files the manifest lists. Nothing here comes from a database,
// from Temporal or from the clock.
//
// The raw sample streams are analysed as they are read (lib/protocol analyzeSamples) and dropped, so
// a campaign of many long repeats does not hold every stream in memory at once.
//
// Strictness: the manifest and spec.json are required (without them there is nothing to check
// against). Every other file is optional: a missing or unreadable one is recorded in `problems` and
// its figures become "not sampled" / "not reconciled", never a guess.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { analyzeFile } from '../../loadgen/analyze-file';
import { evidencePlan } from '../../protocol/stream-plan';
import type { RunAnalysis } from '../../protocol/analysis';
import { quietLatency, type QuietLatency, type StealSample } from '../../protocol/host-quiet';
import type { CampaignResult, InterruptedAttempt } from '../../protocol/campaign-result';
import { parseCampaignSpec, SpecError, type CampaignSpec } from '../../protocol/spec';
import { measuredConfigurations } from '../../protocol/variants';
import type { DbCalibrationFile } from '../../protocol/db-calibration';
import type { CloudEvidence } from '../../protocol/cloud-evidence';
import { parseLogLine, type LogLine } from '../campaign-log';
import {
  APP_NODE_HOST_FILE,
  BASELINE_FILE,
  HISTORY_ALERT_FILE,
  CALIBRATION_FILE,
  CEILING_DIR,
  CLOUD_DB_LOAD,
  CLOUD_FILES,
  CLOUD_OS_METRICS,
  CLOUD_RDS_METRICS,
  DB_SAMPLES,
  WAL_BRACKET,
  DENOMINATOR_FILE,
  DB_CALIBRATION_FILE,
  DISK_SAMPLES,
  HOST_SAMPLES,
  INTERRUPTED,
  LOAD,
  LOG_FILE,
  MANIFEST_FILE,
  POSTGRES_LOG,
  RECONCILE,
  REPEATS_DIR,
  VARIANTS_DIR,
  RESULT_FILE,
  RIG_FILE,
  SAMPLES,
  SERVICE_FILE,
  SPEC_FILE,
  VERDICT,
  WARMUP_FILE,
  parseRepeatPath,
  parseWarmupPath,
} from '../layout';
import { assertManifest, type Manifest } from '../manifest';
import type { HistoryAlert } from '../history-alert';
import {
  BaselineChoiceSchema,
  HistoryAlertSchema,
  CalibrationSchema,
  CloudDbLoadSchema,
  CloudOsSchema,
  CloudRdsSchema,
  DbSampleSchema,
  DenominatorSchema,
  DbCalibrationSchema,
  WalBracketSchema,
  DiskSampleSchema,
  HostSampleSchema,
  InterruptedSchema,
  NodesFileSchema,
  type NodesFile,
  LoadSchema,
  ReconcileSchema,
  ResultSchema,
  RigSchema,
  ServiceFileSchema,
  StepRecordSchema,
  VariantChangeSchema,
  VerdictSchema,
  WarmupSchema,
  isSampleError,
  type BaselineChoice,
  type CalibrationFile,
  type DbSampleRow,
  type DenominatorFile,
  type WalBracketFile,
  type ServiceFile,
  type DiskSampleRow,
  type HostSampleRow,
  type LoadFile,
  type ReconcileFile,
  type RigFile,
  type RunReport,
  type StepRecord,
  type WarmupFile,
} from '../records';

/** variants/NN-<variant>.json as the page reads it. */
export interface VariantChange {
  seq: number;
  variant: string;
  at: string;
  applied: { database: Record<string, string>; service: Record<string, string | undefined>; restarted: { database: string[]; service: boolean } };
}

export type AttemptKind = 'sustained' | 'rung' | 'ceiling';

/** What the page reads of calibration/database.json. */
export type DbCalibrationVerdict = Pick<DbCalibrationFile, 'calibrated' | 'passed' | 'total'> & { cases: Array<{ name: string; ok: boolean }> };

export interface AttemptEvidence {
  kind: AttemptKind;
  config: string;
  repeat: number;
  attempt: number;
  /** Relative folder, e.g. repeats/batched/r2-a1 (or ceiling). */
  dir: string;
  /** File names present (and listed) in the folder. */
  files: string[];
  load: LoadFile | null;
  verdict: RunReport | null;
  reconcile: ReconcileFile | null;
  db: DbSampleRow[] | null;
  host: HostSampleRow[] | null;
  /**
   * The app node's host samples (aws), all campaign long: the page cuts this attempt's window out of
   * them. Absent on a rig without an app node.
   */
  appNodeHost?: HostSampleRow[];
  postgresLogBytes: number | null;
  /** postgres.log's text (the markers tail attribution reads); null when not in the evidence. */
  postgresLog: string | null;
  /** wal-bracket.json (the WAL at the load's edges); null when not in the evidence (repeats before issue 31). */
  walBracket: WalBracketFile | null;
  /** disk-samples.jsonl (local target's per-second disk rows); null when not in the evidence. */
  disk: DiskSampleRow[] | null;
  /** The cloud's own evidence of the window (aws only); absent when the folder has none of its files. */
  cloud?: CloudEvidence;
  /** The analysis of samples.csv.gz; null when the attempt is interrupted or the stream is absent/unreadable. */
  analysis: RunAnalysis | null;
  /**
   * A sustained repeat's p50 over the seconds its host's CPU steal stayed low (lib/protocol/host-quiet.ts),
   * from the same stream and host-samples.jsonl; null without both (or for other kinds). Comparisons read it.
   */
  quiet?: QuietLatency | null;
  /** The configured length the analysis used (s). */
  durationS: number | null;
  /** Why the samples could not be analysed (absent, unreadable). */
  samplesProblem: string | null;
  /** Set when the attempt was interrupted: why. */
  interrupted: string | null;
  /** Problems with this attempt's optional files (named, one sentence each). */
  problems: string[];
  /** nodes.json: a row per load node (a repeat sent from several, issue 37); absent otherwise. */
  nodes?: NodesFile | null;
}

/** One attempt of a warm-up (warmup/<config>/aA): kept and shown, never counted. */
export interface WarmupEvidence {
  config: string;
  attempt: number;
  dir: string;
  load: LoadFile | null;
  reconcile: ReconcileFile | null;
  judged: WarmupFile | null;
  /** Re-derived from its own stream; null when the stream is absent or unreadable (see problems). */
  analysis: RunAnalysis | null;
  problems: string[];
}

export interface Evidence {
  campaignId: string;
  manifest: Manifest;
  /** sha256 of manifest.json: one hash that names this exact evidence. */
  manifestSha256: string;
  /** Files present but not in the manifest (not used). */
  unlisted: string[];
  spec: CampaignSpec;
  result: CampaignResult | null;
  steps: StepRecord[];
  rig: RigFile | null;
  /** service.json: the service's own /healthz settings at bring-up; null in campaigns from before it. */
  service: ServiceFile | null;
  calibration: CalibrationFile | null;
  /** calibration/database.json: the database side's calibration; null when it did not run (campaigns before it, aws, calibrate: false). */
  dbCalibration: DbCalibrationVerdict | null;
  denominator: DenominatorFile | null;
  /** baseline.json: the campaign this one is compared with (or why none), when the report step chose one. */
  baselineChoice: BaselineChoice | null;
  /** history-alert.json: the spec's history on this hardware up to this run, as the report step read it. */
  historyAlert: HistoryAlert | null;
  /** variants/NN-<variant>.json: each change of variant, in order (issue 13). */
  variantChanges: VariantChange[];
  attempts: AttemptEvidence[];
  /** The attempts of the closed-loop ceiling (the last one is the measurement). */
  ceiling: AttemptEvidence[];
  /** Warm-ups before each configuration's first repeat, in configuration then attempt order. */
  warmups: WarmupEvidence[];
  log: LogLine[];
  problems: string[];
}

export class EvidenceFormatError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'EvidenceFormatError';
  }
}

type Parsed<T> = { value: T; problem: null } | { value: null; problem: string };

function issueText(rel: string, err: z.ZodError, line?: number): string {
  const i = err.issues[0];
  const where = i.path.length ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(whole value)';
  return `${rel}${line === undefined ? '' : ` line ${line}`}: ${where}: ${i.message}`;
}

export async function loadEvidence(dir: string): Promise<Evidence> {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new Error(`${dir} is not a folder: give a campaign's evidence folder or its id`);
  const { manifest, check } = await assertManifest(abs);
  const manifestSha256 = crypto.createHash('sha256').update(fs.readFileSync(path.join(abs, MANIFEST_FILE))).digest('hex');
  const listed = new Map(manifest.files.map((e) => [e.path, e]));
  const has = (rel: string) => listed.has(rel);
  const problems: string[] = [];
  const fileOf = (rel: string) => path.join(abs, ...rel.split('/'));

  const readJson = <T>(rel: string, schema: z.ZodType): Parsed<T> => {
    if (!has(rel)) return { value: null, problem: `${rel}: not in the evidence` };
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(fileOf(rel), 'utf8'));
    } catch (err) {
      return { value: null, problem: `${rel}: not JSON (${(err as Error).message})` };
    }
    const res = schema.safeParse(raw);
    if (!res.success) return { value: null, problem: issueText(rel, res.error) };
    return { value: raw as T, problem: null };
  };
  const readJsonLines = <T>(rel: string, schema: z.ZodType): Parsed<T[]> => {
    if (!has(rel)) return { value: null, problem: `${rel}: not in the evidence` };
    const rows: T[] = [];
    const lines = fs.readFileSync(fileOf(rel), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].trim();
      if (!line) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        return { value: null, problem: `${rel} line ${i + 1}: not JSON (${(err as Error).message})` };
      }
      const res = schema.safeParse(raw);
      if (!res.success) return { value: null, problem: issueText(rel, res.error, i + 1) };
      rows.push(raw as T);
    }
    return { value: rows, problem: null };
  };

  // spec.json: required.
  if (!has(SPEC_FILE)) throw new EvidenceFormatError(SPEC_FILE, 'missing: without the spec as run there is nothing to check the repeats against');
  let spec: CampaignSpec;
  try {
    spec = parseCampaignSpec(JSON.parse(fs.readFileSync(fileOf(SPEC_FILE), 'utf8')));
  } catch (err) {
    throw new EvidenceFormatError(SPEC_FILE, err instanceof SpecError ? err.message : `not JSON (${(err as Error).message})`);
  }

  // Optional files: absent or malformed is a named problem on the page, and their figures go blank.
  const optional = <T>(p: Parsed<T>): T | null => {
    if (p.problem) problems.push(p.problem);
    return p.value;
  };
  const result = optional(readJson<CampaignResult>(RESULT_FILE, ResultSchema));
  const rig = optional(readJson<RigFile>(RIG_FILE, RigSchema));
  const service = has(SERVICE_FILE) ? optional(readJson<ServiceFile>(SERVICE_FILE, ServiceFileSchema)) : null;
  const calibration = spec.calibrate ? optional(readJson<CalibrationFile>(CALIBRATION_FILE, CalibrationSchema)) : null;
  const dbCalibration = has(DB_CALIBRATION_FILE) ? optional(readJson<DbCalibrationVerdict>(DB_CALIBRATION_FILE, DbCalibrationSchema)) : null;
  const denominator = spec.denominator ? optional(readJson<DenominatorFile>(DENOMINATOR_FILE, DenominatorSchema)) : null;
  const baselineChoice = has(BASELINE_FILE) ? optional(readJson<BaselineChoice>(BASELINE_FILE, BaselineChoiceSchema)) : null;
  const historyAlert = has(HISTORY_ALERT_FILE) ? optional(readJson<HistoryAlert>(HISTORY_ALERT_FILE, HistoryAlertSchema)) : null;
  const variantChanges = manifest.files
    .map((e) => e.path)
    .filter((p) => p.startsWith(`${VARIANTS_DIR}/`))
    .sort()
    .flatMap((p) => optional(readJson<VariantChange>(p, VariantChangeSchema)) ?? []);

  // Step records: result.json's list when there is one; otherwise the steps/ files in order.
  let steps: StepRecord[] = result?.steps ?? [];
  if (!result) {
    steps = [];
    for (const e of manifest.files) {
      if (!/^steps\/\d\d-[a-z0-9-]+\.json$/.test(e.path)) continue;
      const s = readJson<StepRecord>(e.path, StepRecordSchema);
      if (s.value) steps.push(s.value);
      else problems.push(s.problem);
    }
  }

  // campaign.log: exactly the prefix the manifest sealed.
  const log: LogLine[] = [];
  const logEntry = listed.get(LOG_FILE);
  if (logEntry) {
    const buf = fs.readFileSync(fileOf(LOG_FILE)).subarray(0, logEntry.size);
    for (const [i, line] of buf.toString('utf8').split('\n').entries()) {
      if (!line) continue;
      const l = parseLogLine(line);
      if (l) log.push(l);
      else problems.push(`${LOG_FILE} line ${i + 1}: not '<time> <kind> <text>'`);
    }
  }

  // Repeat attempts, grouped by folder.
  const folders = new Map<string, { config: string; repeat: number; attempt: number; files: string[] }>();
  for (const e of manifest.files) {
    const p = parseRepeatPath(e.path);
    if (!p) continue;
    const key = `${REPEATS_DIR}/${p.config}/r${p.repeat}-a${p.attempt}`;
    const f = folders.get(key) ?? { config: p.config, repeat: p.repeat, attempt: p.attempt, files: [] };
    f.files.push(p.file);
    folders.set(key, f);
  }
  const interruptedList: InterruptedAttempt[] = result?.interrupted ?? [];
  const ceilingDirs = findCeilingDirs(manifest, result, spec);
  const ceilingConfig = ceilingDirs.some((d) => d.startsWith(`${REPEATS_DIR}/`)) ? 'ceiling' : null;

  // The app node's host samples (aws), in hourly files, merged in time order.
  const appNodeFiles = manifest.files.map((e) => e.path).filter((p) => APP_NODE_HOST_FILE.test(p)).sort();
  const appNodeHost = appNodeFiles.length
    ? appNodeFiles.flatMap((rel) => optional(readJsonLines<HostSampleRow>(rel, HostSampleSchema)) ?? []).sort((a, b) => Date.parse(a.t) - Date.parse(b.t))
    : undefined;

  const sorted = [...folders.entries()].sort(([, a], [, b]) => (a.config < b.config ? -1 : a.config > b.config ? 1 : a.repeat - b.repeat || a.attempt - b.attempt));
  const attempts: AttemptEvidence[] = [];
  const ceiling: AttemptEvidence[] = [];
  for (const [rel, f] of sorted) {
    const isCeiling = f.config === ceilingConfig && ceilingDirs.includes(rel);
    const kind: AttemptKind = isCeiling ? 'ceiling' : spec.ladder ? 'rung' : 'sustained';
    // An invalid attempt (result.json's repeats: the instrument's failure) was judged; its re-run is a later attempt, not its replacement.
    const judgedInvalid = (result?.repeats ?? []).some((x) => x.dir === rel && x.invalid);
    const later = !judgedInvalid && sorted.some(([, o]) => o.config === f.config && o.repeat === f.repeat && o.attempt > f.attempt);
    const a = await readAttempt(rel, f.files, kind, f.config, f.repeat, f.attempt, later, interruptedList);
    (isCeiling ? ceiling : attempts).push(a);
  }
  // The layout's own ceiling/ folder (files directly in it, or ceiling/rK-aA/).
  for (const d of ceilingDirs) {
    if (d.startsWith(`${REPEATS_DIR}/`)) continue;
    const files = manifest.files.filter((e) => e.path.startsWith(`${d}/`) && !e.path.slice(d.length + 1).includes('/')).map((e) => e.path.slice(d.length + 1));
    const ra = (x: string) => {
      const m = /r(\d+)-a(\d+)$/.exec(x);
      return m ? [Number(m[1]), Number(m[2])] : [1, 1];
    };
    const [k, att] = ra(d);
    const later = ceilingDirs.some((o) => o !== d && !o.startsWith(`${REPEATS_DIR}/`) && ra(o)[0] === k && ra(o)[1] > att);
    ceiling.push(await readAttempt(d, files, 'ceiling', 'ceiling', k, att, later, interruptedList));
  }

  async function readAttempt(
    rel: string,
    files: string[],
    kind: AttemptKind,
    config: string,
    repeat: number,
    attempt: number,
    laterExists: boolean,
    interruptedBy: InterruptedAttempt[],
  ): Promise<AttemptEvidence> {
    const aProblems: string[] = [];
    const at = (name: string) => `${rel}/${name}`;
    const take = <T>(p: Parsed<T>): T | null => {
      if (p.problem && !p.problem.endsWith('not in the evidence')) aProblems.push(p.problem);
      return p.value;
    };
    const load = take(readJson<LoadFile>(at(LOAD), LoadSchema));
    const verdict = take(readJson<RunReport>(at(VERDICT), VerdictSchema));
    const reconcile = take(readJson<ReconcileFile>(at(RECONCILE), ReconcileSchema));
    const db = take(readJsonLines<DbSampleRow>(at(DB_SAMPLES), DbSampleSchema));
    const host = take(readJsonLines<HostSampleRow>(at(HOST_SAMPLES), HostSampleSchema));
    const pg = listed.get(at(POSTGRES_LOG));
    const disk = files.includes(DISK_SAMPLES) ? take(readJsonLines<DiskSampleRow>(at(DISK_SAMPLES), DiskSampleSchema)) : null;
    const hasCloud = files.some((f) => (CLOUD_FILES as readonly string[]).includes(f));
    const cloudFile = <T>(name: string, schema: z.ZodType): T | null => (files.includes(name) ? take(readJson<T>(at(name), schema)) : null);
    const cloud: CloudEvidence | undefined = hasCloud
      ? { rds: cloudFile(CLOUD_RDS_METRICS, CloudRdsSchema), os: cloudFile(CLOUD_OS_METRICS, CloudOsSchema), load: cloudFile(CLOUD_DB_LOAD, CloudDbLoadSchema) }
      : undefined;

    const listedAs = interruptedBy.find((i) => i.dir === rel || (kind !== 'ceiling' && i.configuration === config && i.index === repeat && i.attempt === attempt));
    // interrupted.json: written by the attempt that found this one dead (or by a cancelled attempt).
    const marker = files.includes(INTERRUPTED) ? readJson<{ reason: string }>(at(INTERRUPTED), InterruptedSchema) : null;
    if (marker?.problem) aProblems.push(marker.problem);
    const loadRaw = load as (LoadFile & { cutShort?: boolean }) | null;
    const cutShort = loadRaw?.cut_short ?? loadRaw?.cutShort ?? false;
    let interrupted: string | null = null;
    if (listedAs) interrupted = listedAs.reason;
    else if (marker?.value) interrupted = `${marker.value.reason} (interrupted.json)`;
    else if (cutShort) interrupted = `cut short${loadRaw?.cut_reason ? `: ${loadRaw.cut_reason}` : ''} (load.json)`;
    else if (verdict?.verdict.interrupted) interrupted = 'verdict.json records the run as cut short';
    else if (laterExists) interrupted = 'a later attempt of the same repeat replaced it (the worker running it was lost)';
    else if (!files.includes(VERDICT)) interrupted = 'no verdict.json: the attempt never finished';

    const nodes = files.includes('nodes.json') ? take(readJson<NodesFile>(at('nodes.json'), NodesFileSchema)) : undefined;
    const durationS = durationOf(spec, kind);
    let analysis: RunAnalysis | null = null;
    let quiet: QuietLatency | null = null;
    let samplesProblem: string | null = null;
    if (!files.includes(SAMPLES)) samplesProblem = `${at(SAMPLES)} is not in the evidence`;
    else if (interrupted === null) {
      try {
        // The same reader and analysis `rig measure` and the repeat activity use (lib/loadgen analyzeFile).
        // A ceiling is a closed loop: its ingest rows may share an intended time (sample-row.ts duplicateRows).
        // A stream older than its `#plan` record is judged against load.json's (sealed with it).
        const plan = load ? evidencePlan(load) : null;
        // A workload's windows (issue 35 item 4), as the repeat activity asked for them.
        const windowSeconds = kind === 'sustained' ? measuredConfigurations(spec).find((c) => c.name === config)?.workload?.windowSeconds : undefined;
        const read = await analyzeFile(fileOf(at(SAMPLES)), { ...(durationS ? { durationS } : {}), plan, closedLoop: kind === 'ceiling', ...(windowSeconds ? { windowSeconds } : {}) });
        analysis = read.analysis;
        quiet = kind === 'sustained' && load && host ? quietLatency(read.columns, stealSamples(host), Date.parse(load.started_at), analysis.duration_s) : null;
      } catch (err) {
        samplesProblem = `${at(SAMPLES)} cannot be read: ${(err as Error).message.replace(fileOf(at(SAMPLES)), at(SAMPLES))}`;
      }
    }
    return {
      kind,
      config,
      repeat,
      attempt,
      dir: rel,
      files: [...files].sort(),
      load,
      verdict,
      reconcile,
      db,
      host,
      ...(appNodeHost ? { appNodeHost } : {}),
      postgresLogBytes: pg ? pg.size : null,
      postgresLog: pg ? fs.readFileSync(fileOf(at(POSTGRES_LOG)), 'utf8') : null,
      walBracket: files.includes(WAL_BRACKET) ? take(readJson<WalBracketFile>(at(WAL_BRACKET), WalBracketSchema)) : null,
      disk,
      ...(cloud ? { cloud } : {}),
      ...(nodes !== undefined ? { nodes } : {}),
      analysis,
      quiet,
      durationS,
      samplesProblem,
      interrupted,
      problems: aProblems,
    };
  }

  // Warm-ups: grouped by folder like repeats, read with the same schemas, analysed from their own stream.
  const warmFolders = new Map<string, { config: string; attempt: number; files: string[] }>();
  for (const e of manifest.files) {
    const p = parseWarmupPath(e.path);
    if (!p) continue;
    const key = `${p.config}/a${p.attempt}`;
    const f = warmFolders.get(key) ?? { config: p.config, attempt: p.attempt, files: [] };
    f.files.push(p.file);
    warmFolders.set(key, f);
  }
  const warmups: WarmupEvidence[] = [];
  for (const f of [...warmFolders.values()].sort((a, b) => (a.config < b.config ? -1 : a.config > b.config ? 1 : a.attempt - b.attempt))) {
    const rel = `warmup/${f.config}/a${f.attempt}`;
    const wProblems: string[] = [];
    const take = <T>(p: Parsed<T>): T | null => {
      if (p.problem) wProblems.push(p.problem);
      return p.value;
    };
    const load = take(readJson<LoadFile>(`${rel}/${LOAD}`, LoadSchema));
    const reconcile = take(readJson<ReconcileFile>(`${rel}/${RECONCILE}`, ReconcileSchema));
    const judged = take(readJson<WarmupFile>(`${rel}/${WARMUP_FILE}`, WarmupSchema));
    let analysis: RunAnalysis | null = null;
    if (f.files.includes(SAMPLES)) {
      try {
        analysis = (await analyzeFile(fileOf(`${rel}/${SAMPLES}`), { ...(load?.seconds ? { durationS: load.seconds } : {}), plan: load ? evidencePlan(load) : null })).analysis;
      } catch (err) {
        wProblems.push(`${rel}/${SAMPLES} cannot be read: ${(err as Error).message.replace(fileOf(`${rel}/${SAMPLES}`), `${rel}/${SAMPLES}`)}`);
      }
    } else wProblems.push(`${rel}/${SAMPLES}: not in the evidence`);
    warmups.push({ config: f.config, attempt: f.attempt, dir: rel, load, reconcile, judged, analysis, problems: wProblems });
  }

  for (const u of check.unlisted) problems.push(`${u}: present but not in the manifest (added after the campaign was sealed); not used`);
  return {
    campaignId: result?.campaignId ?? path.basename(abs),
    manifest,
    manifestSha256,
    unlisted: check.unlisted,
    spec,
    result,
    steps,
    rig,
    service,
    calibration,
    dbCalibration,
    denominator,
    baselineChoice,
    historyAlert,
    variantChanges,
    attempts,
    ceiling,
    warmups,
    log,
    problems,
  };
}

/** The configured length of one attempt of this kind, from the spec (the analysis uses it, not the stream). */
function durationOf(spec: CampaignSpec, kind: AttemptKind): number | null {
  if (kind === 'ceiling') return spec.ceiling?.seconds ?? null;
  if (kind === 'rung') return spec.ladder?.rungSeconds ?? null;
  return spec.sustained?.repeatSeconds ?? null;
}

/**
 * Where the ceiling's files are: result.json's ceiling.dir when recorded; else the layout's ceiling/
 * (files directly in it, or one folder per attempt); else repeats/ceiling/rK-aA when the campaign ran
 * the ceiling through the repeat activity and the spec has no configuration of that name.
 */
function findCeilingDirs(manifest: Manifest, result: CampaignResult | null, spec: CampaignSpec): string[] {
  if (!spec.ceiling) return [];
  const dirs = new Set<string>();
  const paths = manifest.files.map((e) => e.path);
  const recorded = result?.ceiling?.dir?.replace(/\/+$/, '');
  const candidates = recorded ? [recorded] : [];
  for (const p of paths) {
    let m = new RegExp(`^(${CEILING_DIR}(?:/r\\d+-a\\d+)?)/[^/]+$`).exec(p);
    if (m) dirs.add(m[1]);
    m = new RegExp(`^(${REPEATS_DIR}/ceiling/r\\d+-a\\d+)/[^/]+$`).exec(p);
    const isConfig = spec.sustained?.configurations.some((c) => c.name === 'ceiling');
    if (m && !isConfig) dirs.add(m[1]);
  }
  for (const c of candidates) dirs.add(c);
  return [...dirs].filter((d) => paths.some((p) => p.startsWith(`${d}/`))).sort();
}

/** The host samples' steal, as host-quiet.ts reads it (error lines and rows without a steal left out). */
function stealSamples(rows: readonly HostSampleRow[]): StealSample[] {
  return rows.flatMap((r) => (isSampleError(r) || typeof r.cpu?.st !== 'number' ? [] : [{ endMs: Date.parse(r.t), intervalMs: r.intervalMs, stealPct: r.cpu.st }]));
}
