// runRepeat: one gated repeat (or ladder rung, or the closed-loop ceiling) as one heartbeating
// activity on the data-plane queue.
// Safe to run twice: a retry judges a load that ran to its end instead of measuring again, and an
// interrupted attempt keeps its own run tag and folder and is never counted (below).
//
// Order matters: samplers start, the generator runs (its stream written as it goes; the WAL position is
// read right before its first request and right after its last reply, lib/evidence/wal-bracket.ts, and
// pg_stat_wal once the statistics are flushed, into wal-bracket.json), samplers stop,
// the Postgres log slice is kept, the target's cloud evidence of the window is kept (aws only, never
// gating: keepCloudEvidence), the database is reconciled by run tag, and only then is the verdict
// derived from the files: evidence is written before it is summarised.
//
// A completed measurement is a result; only an interrupted one is re-run. Attempt A of repeat K lives
// in repeats/<config>/rK-aA with run tag ...rK.aA.
// - Its load ran to its end: the verdict is always written, and the repeat counts in M. If what follows
//   the load fails (a sampler's wrap-up, reconcile, the analysis) the verdict is FAIL with that reason.
//   If its worker died after the load but before the verdict, the next attempt judges THAT attempt
//   (its stream, its run tag) instead of measuring again. If it was judged but its result never reached
//   Temporal (an outage: the completion is dropped and the heartbeat timeout runs the next attempt),
//   the next attempt returns that judgement, its verdict.json kept as written (issue 33).
// - Still running in this worker when the next attempt starts (the server timed it out during an
//   outage and answered its next heartbeat NotFound): it runs to its end, and the next attempt waits
//   for it before looking at the files (activities/attempt-outage.ts), so two loads never overlap.
// - Its load was cut short (the load threw, it was cancelled, its worker died mid-load): interrupted,
//   never counted, run again with a fresh run tag. interrupted.json says what happened: the error
//   text, "cancelled", or, written by the next attempt when the dead one left no word, a heartbeat
//   timeout.
import { hostName } from '../lib/tools/host-name';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { isTempName } from '../lib/evidence/atomic';
import { startDbSampler } from '../lib/evidence/db-sampler';
import { dbSnapshotIntervalMs } from '../lib/protocol/db-sampling';
import { WalBracket } from '../lib/evidence/wal-bracket';
import { startHostSampler } from '../lib/evidence/host-sampler';
import { startFolderDiskSampler, type DiskSampler } from '../lib/evidence/disk-sampler';
import { DB_SAMPLES, DISK_SAMPLES, HOST_SAMPLES, INTERRUPTED, LOAD, POSTGRES_LOG, RECONCILE, SAMPLES, VERDICT, WAL_BRACKET, repeatDir } from '../lib/evidence/layout';
import type { InterruptedFile, LoadFile } from '../lib/evidence/records';
import { EvidenceStore } from '../lib/evidence/store';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { readCustomersFile } from '../lib/loadgen/customers';
import { detectFixtures } from '../lib/targets/fixtures-scope';
import { otherTenantKeys } from '../lib/targets/tenant-fixtures';
import { loadArrivals } from '../lib/loadgen/trace-file';
import { runLoad, type ProgressLine } from '../lib/loadgen/run-load';
import { AFTER_LOAD, afterLoadReason, failAfterLoad, unanalysedSummary, unanalysedVerdict } from '../lib/protocol/after-load';
import type { InterruptedAttempt, RepeatSummary } from '../lib/protocol/campaign-result';
import { summarizeRepeat } from '../lib/protocol/repeat-summary';
import { invalidReason, stealSpread } from '../lib/protocol/repeat-validity';
import { evaluateRun, type Evaluation } from '../lib/protocol/evaluate';
import type { NodeRow } from '../lib/protocol/node-gates';
import type { Target } from '../lib/targets/target';
import { customersFile } from './bringup';
import { reconcileAttempt } from './reconcile-attempt';
import type { RepeatInput, RepeatOutput } from './contract';
import { attempt, heartbeat } from './context';
import { awaitEarlierAttempts, loadSignal, trackAttempt } from './attempt-outage';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';

/** Run tags match [A-Za-z0-9._:-]{1,64}: a short hash of the campaign keeps them unique and short. */
export function runTagFor(campaignId: string, config: string, index: number, att: number): string {
  return `${campaignTagHash(campaignId)}.${runTagName(config)}.r${index}.a${att}`;
}

/** How long a configuration's name may be and still stand in its run tags as it is. */
export const RUN_TAG_NAME_CHARS = 36;

/**
 * A configuration's part of its run tags: the name itself up to 36 characters (the tags every such
 * name always had), else its first 23 characters, ':' and 12 hex digits of sha256 of the whole name
 * (36 characters in all). Two names never share a tag (issue 47 item 3: cut to 36 characters, two
 * names sharing a prefix counted each other's rows): distinct short names stay distinct, a long one
 * is told apart by its whole name's hash, and ':' (which no configuration name holds, spec.ts) keeps a
 * long name's part from ever equalling a short name.
 */
export function runTagName(config: string): string {
  if (config.length <= RUN_TAG_NAME_CHARS) return config;
  return `${config.slice(0, 23)}:${crypto.createHash('sha256').update(config).digest('hex').slice(0, 12)}`;
}

/** The campaign's part of every run tag (repeats, warm-ups): short, and the same on every attempt. */
export function campaignTagHash(campaignId: string): string {
  return crypto.createHash('sha256').update(campaignId).digest('hex').slice(0, 10);
}

export function attemptDir(input: Pick<RepeatInput, 'kind' | 'configuration' | 'index'>, att: number): string {
  return input.kind === 'ceiling' ? `ceiling/r1-a${att}` : repeatDir(input.configuration.name, input.index, att);
}

/** Written by a later attempt into an earlier folder that has no record of why it stopped. */
export const HEARTBEAT_TIMEOUT = 'heartbeat timeout (its worker stopped answering)';

/**
 * An earlier attempt whose load ran to its end (its stream committed, load.json not cut short) but
 * which has no verdict: its worker was lost after the load. It is judged, never measured again.
 */
function loadEnded(store: EvidenceStore, dir: string): boolean {
  if (!store.exists(`${dir}/${SAMPLES}`) || !store.exists(`${dir}/${LOAD}`) || store.exists(`${dir}/${INTERRUPTED}`)) return false;
  const load = readJsonFile<LoadFile>(store, `${dir}/${LOAD}`);
  return load?.cut_short === false;
}

/**
 * Earlier attempts of this repeat that left a folder without a verdict and whose load did not run to
 * its end: interrupted, never counted. The reason is the attempt's own interrupted.json when it wrote
 * one (the load threw, it was cancelled); otherwise its worker died without a word.
 */
function findInterrupted(store: EvidenceStore, input: RepeatInput, att: number): InterruptedAttempt[] {
  const found: InterruptedAttempt[] = [];
  // A re-run of an invalid repeat looks only at its own attempts: the ones before it were judged.
  for (let a = (input.attemptsBefore ?? 0) + 1; a < att; a++) {
    const dir = attemptDir(input, a);
    if (!store.exists(dir) || store.exists(`${dir}/${VERDICT}`) || loadEnded(store, dir)) continue;
    const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, a);
    let reason = readJsonFile<InterruptedFile>(store, `${dir}/${INTERRUPTED}`)?.reason;
    if (!reason) {
      reason = HEARTBEAT_TIMEOUT;
      store.writeJson(`${dir}/${INTERRUPTED}`, { reason, detected_by_attempt: att, detected_at: new Date().toISOString() } satisfies InterruptedFile);
    }
    if (!store.exists(`${dir}/${LOAD}`)) {
      const started = fs.statSync(store.path(dir)).birthtime.toISOString();
      store.writeJson(`${dir}/${LOAD}`, { started_at: started, cut_short: true, cut_reason: reason, run_tag: runTag } satisfies LoadFile);
    }
    salvage(store, dir);
    store.logWarning(`${input.configuration.name} repeat ${input.index} attempt ${a} was interrupted (${reason}) and is not counted`);
    found.push({ configuration: input.configuration.name, index: input.index, attempt: a, runTag, dir, reason });
  }
  return found;
}

function readJsonFile<T>(store: EvidenceStore, rel: string): T | null {
  if (!store.exists(rel)) return null;
  try {
    return JSON.parse(fs.readFileSync(store.path(rel), 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * Nothing measured is lost: what the dead attempt had written (its generator flushes the stream when
 * its parent dies) is kept under a `.partial` name, so it is evidence without posing as a full stream.
 */
function salvage(store: EvidenceStore, dir: string): void {
  for (const name of fs.readdirSync(store.path(dir))) {
    if (!isTempName(name)) continue;
    const final = name.slice(1, name.indexOf('.tmp-'));
    const dot = final.indexOf('.');
    const partial = dot > 0 ? `${final.slice(0, dot)}.partial${final.slice(dot)}` : `${final}.partial`;
    if (!store.exists(`${dir}/${partial}`)) store.commit(`${dir}/${partial}`, store.path(`${dir}/${name}`));
  }
}

export function repeatActivities(deps: ActivityDeps) {
  return { runRepeat: (input: RepeatInput) => runRepeatWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { runRepeat } = repeatActivities(defaultDeps);

/** Which attempt of which repeat, for the in-process registry of running attempts. */
function attemptKey(input: RepeatInput, att: number): string {
  return `${input.campaignId}/${attemptDir(input, att)}`;
}

async function runRepeatWith(deps: ActivityDeps, input: RepeatInput): Promise<RepeatOutput> {
  const att = (input.attemptsBefore ?? 0) + (input.attempt ?? attempt());
  // An earlier attempt still running in this worker (timed out by the server during an outage) is
  // waited for: its load is not measured twice, nor beside this one.
  const earlier: string[] = [];
  for (let a = att - 1; a > (input.attemptsBefore ?? 0); a--) earlier.push(attemptKey(input, a));
  const waited = await awaitEarlierAttempts(earlier, (key) => ({ waitingFor: key.slice(key.indexOf('/') + 1), phase: 'an earlier attempt still running here' }));
  if (waited.length > 0) {
    EvidenceStore.forCampaign(input.campaignId).appendLog('info', `${labelOf(input, att)}: waited for ${waited.map((k) => k.slice(k.indexOf('/') + 1)).join(', ')}, still running in this worker (Temporal had timed it out while it could not hear its heartbeats)`);
  }
  // A later attempt cancelled while it waits for this one stops this one's load (the server reaches only it).
  const stop = new AbortController();
  return trackAttempt(attemptKey(input, att), attemptOnce(deps, input, att, stop.signal), stop);
}

async function attemptOnce(deps: ActivityDeps, input: RepeatInput, att: number, stop: AbortSignal): Promise<RepeatOutput> {
  const target = rigTarget(deps, input.rig);
  const store = EvidenceStore.forCampaign(input.campaignId);
  const interrupted = findInterrupted(store, input, att);

  // A retry of a repeat whose load already ran to its end judges that load, or returns the judgement
  // it already has; it never measures again.
  for (let a = att - 1; a > (input.attemptsBefore ?? 0); a--) {
    const dir = attemptDir(input, a);
    if (!loadEnded(store, dir)) continue;
    if (store.exists(`${dir}/${VERDICT}`)) {
      store.appendLog('info', `${labelOf(input, a)}: judged, but its result never reached Temporal (an outage, say): counted as judged (attempt ${att}), not measured again`);
    } else {
      store.appendLog('info', `${labelOf(input, a)}: its load ran to its end but its worker was lost before the verdict: judged now (attempt ${att}), not measured again`);
    }
    await keepCloudEvidence(target, store, input, a);
    return { summary: await judge(target, store, input, a, []), interrupted };
  }

  const dir = attemptDir(input, att);
  const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
  const label = labelOf(input, att);
  store.appendLog('info', `${label}: start, run tag ${runTag}`);

  // Until its load has run to its end the attempt can only be interrupted: whatever throws on the way
  // (set-up, the generator, keeping its stream) is recorded in interrupted.json, and Temporal runs the
  // repeat again with a fresh run tag.
  let load: Awaited<ReturnType<typeof runLoad>>;
  const wrapUp: string[] = [];
  const signal = loadSignal(stop);
  try {
    load = await measure(target, store, input, dir, runTag, wrapUp, signal);
  } catch (err) {
    // Nothing to record when it failed before its folder existed (no secrets yet, say): nothing ran.
    if (store.exists(dir)) {
      if (!store.exists(`${dir}/${INTERRUPTED}`)) {
        store.writeJson(`${dir}/${INTERRUPTED}`, { reason: `the load failed: ${messageOf(err)}`, detected_by_attempt: att, detected_at: new Date().toISOString() } satisfies InterruptedFile);
      }
      salvage(store, dir);
      store.logWarning(`${label} did not run to its end (${messageOf(err)}); recorded as interrupted, not counted`);
    }
    throw err;
  }

  if (load.interrupted) {
    // Cut short: evidence, never a result. Count the rows it wrote all the same (what the database holds).
    await reconcileAttempt(target, store, input.campaignId, dir, runTag, everyTenant(input)).catch(() => undefined);
    const cancelled = signal.aborted;
    const reason = cancelled ? 'cancelled' : `cut short: ${load.summary.reason ?? 'the generator stopped before its end'}`;
    store.writeJson(`${dir}/${INTERRUPTED}`, { reason, detected_by_attempt: att, detected_at: new Date().toISOString() } satisfies InterruptedFile);
    store.logWarning(`${label} was ${reason}; recorded as interrupted, not counted`);
    if (cancelled) throw new CancelledFailure('repeat cancelled');
    throw new Error(`${label}: the load was ${reason}: run again`);
  }
  await keepCloudEvidence(target, store, input, att);
  return { summary: await judge(target, store, input, att, wrapUp), interrupted };
}

/**
 * The cloud's own evidence of a load that ran to its end (Target.cloudEvidence; the local target has
 * none), over the window its load.json records, written beside the load's own files before the
 * verdict. A failure never reaches the verdict: it is in the collector's file as `{ error }` (shown on
 * the page) and a warning in the campaign log, not in the wrap-up reasons that fail a repeat. These
 * are diagnostics beside the gated figures, like the DB sampler's waits, and a monitoring API that
 * refuses or lags says nothing about whether the service held its rate. Files already there (a retry
 * judging an earlier attempt) are kept as they are.
 */
async function keepCloudEvidence(target: Target, store: EvidenceStore, input: RepeatInput, att: number): Promise<void> {
  if (!target.cloudEvidence) return;
  const dir = attemptDir(input, att);
  const load = readJsonFile<LoadFile>(store, `${dir}/${LOAD}`);
  if (!load?.started_at || !load.ended_at) return;
  const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
  const beat = setInterval(() => heartbeat({ runTag, phase: 'cloud evidence' }), 5_000);
  const write = (file: string, json: unknown) => {
    if (!store.exists(`${dir}/${file}`)) store.writeJson(`${dir}/${file}`, json);
  };
  try {
    await target.cloudEvidence(input.campaignId, { start: load.started_at, end: load.ended_at }, write, (message) => heartbeat({ runTag, phase: 'cloud evidence', message }));
  } catch (err) {
    store.logWarning(`${labelOf(input, att)}: cloud evidence not kept (${messageOf(err)}); the repeat is judged without it`);
  } finally {
    clearInterval(beat);
  }
}

/** A load of several tenants is counted over every tenant's rows of its run tag, not the fixtures tenant's alone. */
function everyTenant(input: RepeatInput): boolean {
  return !input.closedLoopWorkers && Boolean(input.configuration.workload?.tenants);
}

function labelOf(input: RepeatInput, att: number): string {
  return input.kind === 'ceiling' ? `ceiling${att > 1 ? ` (attempt ${att})` : ''}` : `${input.configuration.name} repeat ${input.index}${att > 1 ? ` (attempt ${att})` : ''}`;
}

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/**
 * The load itself, with its samplers and Postgres log slice, up to a committed stream and load.json.
 * A failure of the wrap-up (a sampler, the log slice) is not the load's: it goes to `wrapUp` and fails
 * the verdict of a load that ran to its end.
 */
async function measure(target: Target, store: EvidenceStore, input: RepeatInput, dir: string, runTag: string, wrapUp: string[], signal: AbortSignal): Promise<Awaited<ReturnType<typeof runLoad>>> {
  const apiKey = await target.apiKeys.read(input.campaignId);
  if (!apiKey) throw new Error(`rig ${input.campaignId} has no API key yet: bring-up has not run`);
  const urls = await target.dbUrls(input.campaignId);
  const pgLog = await target.openPostgresLog(input.campaignId);
  // Several clients (issue 35): the other tenants' keys, minted now and given to the generator by env.
  const workload = input.closedLoopWorkers ? undefined : input.configuration.workload;
  const customers = readCustomersFile(customersFile(target, input.campaignId));
  const tenantKeys = workload?.tenants ? await otherTenantKeys(urls.ownerUrl, workload.tenants.count, customers.length, (await detectFixtures(urls.ownerUrl)).livemode) : [];

  const samplesTmp = store.tempPath(`${dir}/${SAMPLES}`);
  const dbTmp = store.tempPath(`${dir}/${DB_SAMPLES}`);
  const hostTmp = store.tempPath(`${dir}/${HOST_SAMPLES}`);
  // Dense enough for 100+ snapshots of who waits on what in this load (lib/protocol/db-sampling.ts).
  const dbSampler = await startDbSampler({ url: urls.superuserUrl, file: dbTmp, intervalMs: dbSnapshotIntervalMs(input.seconds) });
  const hostSampler = startHostSampler({ file: hostTmp });
  // Per second, the disk under the database (local: the rig's own; aws has Enhanced Monitoring instead).
  const folders = target.databaseFolders?.(input.campaignId);
  const diskTmp = store.tempPath(`${dir}/${DISK_SAMPLES}`);
  const diskSampler: DiskSampler | null = folders ? startFolderDiskSampler(folders, diskTmp) : null;
  // Its own connection, opened now, so the readings at the load's edges cost one query each.
  const wal = await WalBracket.open(urls.superuserUrl);
  let walDone: Promise<unknown> | undefined;
  const startedAt = new Date().toISOString();
  let load: Awaited<ReturnType<typeof runLoad>>;
  try {
    load = await runLoad(
      {
        url: input.rig.serviceUrl,
        apiKey,
        mode: input.closedLoopWorkers ? 'closed' : 'open',
        rate: input.closedLoopWorkers ? undefined : input.configuration.eventsPerSecond,
        workers: input.closedLoopWorkers,
        batch: input.configuration.batch,
        seconds: input.seconds,
        maxInFlight: input.closedLoopWorkers ? undefined : input.maxInFlight,
        probeRate: input.probe.rate,
        // The configuration's workload (issue 35): its schedule's shape, written into the stream's plan.
        arrivals: input.closedLoopWorkers ? null : loadArrivals(input.configuration.workload),
        // Tenants and repeated keys (issue 35), written into the stream's plan; absent without them, as before.
        ...(workload?.tenants ? { tenants: workload.tenants, tenantKeys: tenantKeys.map((k) => k.reveal()) } : {}),
        ...(workload?.duplicates ? { duplicates: workload.duplicates } : {}),
        // Batch sizes and client timestamps (issue 35), likewise.
        ...(workload?.batchSizes ? { batchSizes: workload.batchSizes } : {}),
        ...(workload?.timestamps ? { timestamps: workload.timestamps } : {}),
        customers,
        runTag,
        out: samplesTmp,
      },
      (p: ProgressLine) => heartbeat({ runTag, second: p.second, sent: p.sent, dropped: p.dropped, failed: p.failed, p99_ms: p.p99_ms }),
      { signal, beforeFirstRequest: () => wal.atStart(), afterLastReply: () => wal.atEnd() },
    );
  } finally {
    // pg_stat_wal is read once the backends have published it (WAL_STATS_LAG_MS after the last reply):
    // the wait runs beside the wrap-up below, and is over before the activity returns (the next
    // repeat's load would otherwise be in it).
    walDone = wal.finish().then(
      (file) => store.writeJson(`${dir}/${WAL_BRACKET}`, file),
      (err: unknown) => wrapUp.push(afterLoadReason('the WAL bracket', err)),
    );
    const names = ['the DB sampler', 'the host sampler', 'the disk sampler'];
    const stopped = await Promise.allSettled([dbSampler.stop(), hostSampler.stop(), diskSampler?.stop()]);
    stopped.forEach((r, i) => {
      if (r.status === 'rejected') wrapUp.push(afterLoadReason(names[i], r.reason));
    });
    // A sampler writes its first row one interval in: a repeat cut short before that has none.
    const kept: Array<[string, string]> = [[`${dir}/${DB_SAMPLES}`, dbTmp], [`${dir}/${HOST_SAMPLES}`, hostTmp]];
    if (diskSampler) kept.push([`${dir}/${DISK_SAMPLES}`, diskTmp]);
    for (const [rel, tmp] of kept) {
      try {
        if (fs.existsSync(tmp)) store.commit(rel, tmp);
        else store.writeText(rel, '');
      } catch (err) {
        wrapUp.push(afterLoadReason(`keeping ${path.basename(rel)}`, err));
      }
    }
    try {
      store.writeText(`${dir}/${POSTGRES_LOG}`, await pgLog.read());
    } catch (err) {
      wrapUp.push(afterLoadReason('the Postgres log slice', err));
    }
    await walDone;
  }
  store.commit(`${dir}/${SAMPLES}`, samplesTmp);
  const s = load.summary;
  store.writeJson(`${dir}/${LOAD}`, {
    mode: s.mode,
    started_at: startedAt,
    ended_at: new Date().toISOString(),
    cut_short: load.interrupted,
    cut_reason: load.interrupted ? (s.reason ?? 'cut short') : undefined,
    run_tag: runTag,
    rate: input.closedLoopWorkers ? undefined : input.configuration.eventsPerSecond,
    batch: input.configuration.batch,
    seconds: input.seconds,
    workers: input.closedLoopWorkers,
    offered: s.offered,
    sent: s.sent,
    dropped: s.dropped,
    host: hostName(),
    generator: s,
  } satisfies LoadFile & { generator: unknown });
  return load;
}


/** A repeat sent from several load nodes (activities/node-repeat.ts): their tags and their own rows. */
export interface RepeatNodes {
  runTags: readonly string[];
  rows: readonly NodeRow[];
}

/**
 * The verdict of attempt `att`, whose load ran to its end: reconcile, analyse, judge, write verdict.json.
 * Nothing here re-runs the load: a step that fails makes the verdict FAIL with its reason (beside the
 * wrap-up's), and the repeat still counts in M.
 * A verdict.json already written (judged by an attempt whose result never reached Temporal) is kept as
 * it is: its after-the-load reasons are carried into the summary, the database is not counted again
 * (reconcile.json, or none when that count failed), and the summary is the one that attempt returned.
 */
export async function judge(target: Target, store: EvidenceStore, input: RepeatInput, att: number, wrapUp: string[], nodes?: RepeatNodes): Promise<RepeatSummary> {
  const dir = attemptDir(input, att);
  const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
  const kept = readJsonFile<{ verdict?: { reasons?: string[] } }>(store, `${dir}/${VERDICT}`);
  const after = [...wrapUp, ...(kept?.verdict?.reasons ?? []).filter((r) => r.startsWith(AFTER_LOAD))];
  const writeVerdict = (report: unknown) => {
    if (!kept) store.writeJson(`${dir}/${VERDICT}`, report);
  };
  // Heartbeats go on while it judges: counting a large partition can outlast the heartbeat timeout.
  const beat = setInterval(() => heartbeat({ runTag, phase: 'judging' }), 5_000);
  try {
    let rec: { rows: number; quantity: number } | null = null;
    try {
      failReconcileOnceForTest();
      if (!kept || store.exists(`${dir}/${RECONCILE}`)) rec = await reconcileAttempt(target, store, input.campaignId, dir, nodes ? nodes.runTags : runTag, everyTenant(input));
    } catch (err) {
      after.push(afterLoadReason('reconcile', err));
    }
    let evaluation: Evaluation | null = null;
    try {
      // A long soak's windows (issue 35 item 4): asked for only by a workload's windowSeconds.
      const windowSeconds = input.kind === 'sustained' ? input.configuration.workload?.windowSeconds : undefined;
      const { analysis } = await analyzeFile(store.path(`${dir}/${SAMPLES}`), { durationS: input.seconds, closedLoop: Boolean(input.closedLoopWorkers), ...(windowSeconds ? { windowSeconds } : {}) });
      evaluation = evaluateRun(analysis, {
        kind: input.kind === 'rung' ? 'ladder' : input.kind,
        p99LimitMs: input.kind === 'sustained' ? input.configuration.p99LimitMs : null,
        // A spike's or a ramp's limits (issue 35); absent without a workload, as before.
        phaseP99LimitMs: input.kind === 'sustained' ? input.configuration.workload?.phaseP99LimitMs : undefined,
        recoveryLimitS: input.kind === 'sustained' ? (input.configuration.workload?.recoveryLimitSeconds ?? null) : null,
        windowP99LimitMs: input.kind === 'sustained' ? (input.configuration.workload?.windowP99LimitMs ?? null) : null,
        driftLimit: input.driftLimit,
        ...(input.driftNoted && input.kind === 'sustained' ? { driftNoted: true } : {}),
        reconciliation: rec ? { rows_written: rec.rows, quantity_gained: rec.quantity } : null,
        probeP99Ms: input.probe.p99BudgetMs,
        interrupted: false,
        ...(nodes ? { nodes: nodes.rows } : {}),
      });
    } catch (err) {
      after.push(afterLoadReason('the analysis', err));
    }
    const id = { configuration: input.configuration.name, index: input.index, attempt: att, runTag, kind: input.kind, dir, cutShort: false };
    let summary: RepeatSummary;
    if (evaluation) {
      const { verdict, report } = failAfterLoad(evaluation, after);
      writeVerdict(report);
      const reconciled = rec !== null && verdict.ingest.reconciled && rec.rows === report.events_claimed && rec.quantity === report.quantity_claimed;
      summary = summarizeRepeat(id, report, verdict, { probe: input.probe.rate > 0, reconciled });
      if (input.validity && input.kind === 'sustained') {
        const steal = stealSpread(hostSteal(store, `${dir}/${HOST_SAMPLES}`));
        const why = invalidReason({ state: verdict.state, passed: verdict.passed, checks: verdict.ingest.checks, probeState: verdict.probe.state, afterLoad: after.length }, steal, input.validity.stealBoundPct);
        if (why) {
          summary.invalid = why;
          store.logWarning(`${labelOf(input, att)} is INVALID (${why}): kept and shown, not counted`);
        }
      }
    } else {
      writeVerdict(unanalysedVerdict(after));
      summary = unanalysedSummary(id, after, false);
    }
    if (!kept) store.logVerdict(summary); // logged once, by the attempt that judged it
    return summary;
  } finally {
    clearInterval(beat);
  }
}

/** The CPU steal (%) of each host sample of an attempt (rows the sampler could not take are skipped). */
function hostSteal(store: EvidenceStore, rel: string): number[] {
  if (!store.exists(rel)) return [];
  const out: number[] = [];
  for (const line of fs.readFileSync(store.path(rel), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const st = (JSON.parse(line) as { cpu?: { st?: unknown } }).cpu?.st;
      if (typeof st === 'number') out.push(st);
    } catch {
      // a torn last line: the rows before it are the samples
    }
  }
  return out;
}

/**
 * Test-only (honoured when RIG_TESTING=1): RIG_TEST_FAIL_RECONCILE_ONCE=<file> makes the first
 * reconciliation after a completed load throw; creating the file marks the failure as spent.
 */
function failReconcileOnceForTest(): void {
  const marker = process.env.RIG_TEST_FAIL_RECONCILE_ONCE;
  if (process.env.RIG_TESTING !== '1' || !marker) return;
  try {
    fs.writeFileSync(marker, `${new Date().toISOString()}\n`, { flag: 'wx' });
  } catch {
    return; // spent already
  }
  throw new Error('test hook RIG_TEST_FAIL_RECONCILE_ONCE: the database could not be counted');
}
