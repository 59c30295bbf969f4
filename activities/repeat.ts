// runRepeat: one gated repeat (or ladder rung, or the closed-loop ceiling) as one heartbeating
// activity on the data-plane queue.
//
// Order matters: samplers start, the generator runs (its stream written as it goes), samplers stop,
// the Postgres log slice is kept, the database is reconciled by run tag, and only then is the verdict
// derived from the files: evidence is written before it is summarised.
//
// Attempt A of repeat K lives in repeats/<config>/rK-aA with run tag ...rK.aA. If Temporal runs the
// repeat again (its worker died: the heartbeat timed out), the new attempt finds the earlier folders
// without a verdict and records them as interrupted; they are never counted.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { CancelledFailure } from '@temporalio/common';
import { isTempName } from '../lib/evidence/atomic';
import { startDbSampler } from '../lib/evidence/db-sampler';
import { startHostSampler } from '../lib/evidence/host-sampler';
import { DB_SAMPLES, HOST_SAMPLES, LOAD, POSTGRES_LOG, RECONCILE, SAMPLES, VERDICT, repeatDir } from '../lib/evidence/layout';
import type { LoadFile, ReconcileFile } from '../lib/evidence/records';
import { EvidenceStore } from '../lib/evidence/store';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { readCustomersFile } from '../lib/loadgen/customers';
import { runLoad, type ProgressLine } from '../lib/loadgen/run-load';
import type { InterruptedAttempt } from '../lib/protocol/campaign-result';
import { summarizeRepeat } from '../lib/protocol/repeat-summary';
import { evaluateRun } from '../lib/protocol/evaluate';
import { detectFixtures } from '../lib/targets/fixtures-scope';
import { readSecrets, rigDbUrls } from '../lib/targets/local';
import { readRigRecord } from '../lib/targets/local/rig-record';
import { reconcile } from '../lib/targets/reconcile';
import { customersFile } from './bringup';
import type { RepeatInput, RepeatOutput } from './contract';
import { attempt, cancellationSignal, heartbeat } from './context';

/** Run tags match [A-Za-z0-9._:-]{1,64}: a short hash of the campaign keeps them unique and short. */
export function runTagFor(campaignId: string, config: string, index: number, att: number): string {
  const h = crypto.createHash('sha256').update(campaignId).digest('hex').slice(0, 10);
  return `${h}.${config.slice(0, 36)}.r${index}.a${att}`;
}

export function attemptDir(input: Pick<RepeatInput, 'kind' | 'configuration' | 'index'>, att: number): string {
  return input.kind === 'ceiling' ? `ceiling/r1-a${att}` : repeatDir(input.configuration.name, input.index, att);
}

/** Earlier attempts of this repeat that left a folder without a verdict: a crash cut them short. */
function findInterrupted(store: EvidenceStore, input: RepeatInput, att: number): InterruptedAttempt[] {
  const found: InterruptedAttempt[] = [];
  for (let a = 1; a < att; a++) {
    const dir = attemptDir(input, a);
    if (!store.exists(dir) || store.exists(`${dir}/${VERDICT}`)) continue;
    const reason = 'its worker stopped answering (heartbeat timeout): run again with a fresh run tag';
    if (!store.exists(`${dir}/interrupted.json`)) {
      store.writeJson(`${dir}/interrupted.json`, { reason, detected_by_attempt: att, detected_at: new Date().toISOString() });
    }
    if (!store.exists(`${dir}/${LOAD}`)) {
      const started = fs.statSync(store.path(dir)).birthtime.toISOString();
      store.writeJson(`${dir}/${LOAD}`, { started_at: started, cut_short: true, cut_reason: reason, run_tag: runTagFor(input.campaignId, input.configuration.name, input.index, a) } satisfies LoadFile);
    }
    salvage(store, dir);
    store.logWarning(`${input.configuration.name} repeat ${input.index} attempt ${a} was interrupted and is not counted`);
    found.push({ configuration: input.configuration.name, index: input.index, attempt: a, runTag: runTagFor(input.campaignId, input.configuration.name, input.index, a), dir, reason });
  }
  return found;
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

/** The part of the Postgres log written since `offset`. */
function logSlice(file: string | undefined, offset: number): string {
  if (!file || !fs.existsSync(file)) return '';
  const size = fs.statSync(file).size;
  if (size <= offset) return '';
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    fs.readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export async function runRepeat(input: RepeatInput): Promise<RepeatOutput> {
  const att = input.attempt ?? attempt();
  const store = EvidenceStore.forCampaign(input.campaignId);
  const interrupted = findInterrupted(store, input, att);
  const dir = attemptDir(input, att);
  const runTag = runTagFor(input.campaignId, input.configuration.name, input.index, att);
  const label = input.kind === 'ceiling' ? 'ceiling' : `${input.configuration.name} repeat ${input.index}${att > 1 ? ` (attempt ${att})` : ''}`;
  store.appendLog('info', `${label}: start, run tag ${runTag}`);

  const urls = rigDbUrls(input.campaignId);
  const secrets = readSecrets(input.campaignId);
  if (!secrets.apiKey) throw new Error(`rig ${input.campaignId} has no API key yet: bring-up has not run`);
  const scope = await detectFixtures(urls.ownerUrl);
  const pgLog = readRigRecord(input.campaignId)?.cluster.logFile;
  const pgLogOffset = pgLog && fs.existsSync(pgLog) ? fs.statSync(pgLog).size : 0;

  const samplesTmp = store.tempPath(`${dir}/${SAMPLES}`);
  const dbTmp = store.tempPath(`${dir}/${DB_SAMPLES}`);
  const hostTmp = store.tempPath(`${dir}/${HOST_SAMPLES}`);
  const dbSampler = await startDbSampler({ url: urls.superuserUrl, file: dbTmp });
  const hostSampler = startHostSampler({ file: hostTmp });
  const startedAt = new Date().toISOString();
  let load: Awaited<ReturnType<typeof runLoad>>;
  try {
    load = await runLoad(
      {
        url: input.rig.serviceUrl,
        apiKey: secrets.apiKey,
        mode: input.closedLoopWorkers ? 'closed' : 'open',
        rate: input.closedLoopWorkers ? undefined : input.configuration.eventsPerSecond,
        workers: input.closedLoopWorkers,
        batch: input.configuration.batch,
        seconds: input.seconds,
        maxInFlight: input.closedLoopWorkers ? undefined : input.maxInFlight,
        probeRate: input.probe.rate,
        customers: readCustomersFile(customersFile(input.campaignId)),
        runTag,
        out: samplesTmp,
      },
      (p: ProgressLine) => heartbeat({ runTag, second: p.second, sent: p.sent, dropped: p.dropped, failed: p.failed, p99_ms: p.p99_ms }),
      { signal: cancellationSignal() },
    );
  } finally {
    await Promise.all([dbSampler.stop(), hostSampler.stop()]);
    // A sampler writes its first row one interval in: a repeat cut short before that has none.
    for (const [rel, tmp] of [[`${dir}/${DB_SAMPLES}`, dbTmp], [`${dir}/${HOST_SAMPLES}`, hostTmp]]) {
      if (fs.existsSync(tmp)) store.commit(rel, tmp);
      else store.writeText(rel, '');
    }
    const slice = logSlice(pgLog, pgLogOffset);
    store.writeText(`${dir}/${POSTGRES_LOG}`, slice);
  }
  store.commit(`${dir}/${SAMPLES}`, samplesTmp);
  const s = load.summary;
  store.writeJson(`${dir}/${LOAD}`, {
    mode: s.mode,
    started_at: startedAt,
    ended_at: new Date().toISOString(),
    cut_short: load.interrupted,
    cut_reason: load.interrupted ? 'cancelled' : undefined,
    run_tag: runTag,
    rate: input.closedLoopWorkers ? undefined : input.configuration.eventsPerSecond,
    batch: input.configuration.batch,
    seconds: input.seconds,
    workers: input.closedLoopWorkers,
    offered: s.offered,
    sent: s.sent,
    dropped: s.dropped,
    host: os.hostname(),
    generator: s,
  } satisfies LoadFile & { generator: unknown });

  const rec = await reconcile(urls.ownerUrl, { runTag, livemode: scope.livemode, tenantId: scope.tenantId });
  store.writeJson(`${dir}/${RECONCILE}`, {
    run_tag: runTag,
    rows_written: rec.rows,
    quantity_gained: rec.quantity,
    livemode: rec.livemode,
    other_mode_rows: rec.otherModeRows,
    checked_at: new Date().toISOString(),
  } satisfies ReconcileFile & { other_mode_rows: number });

  if (load.interrupted && cancellationSignal()?.aborted) {
    store.writeJson(`${dir}/interrupted.json`, { reason: 'cancelled', detected_by_attempt: att, detected_at: new Date().toISOString() });
    store.logWarning(`${label} was cancelled; recorded as interrupted, not counted`);
    throw new CancelledFailure('repeat cancelled');
  }

  // The verdict, derived from the files just written.
  const { analysis } = await analyzeFile(store.path(`${dir}/${SAMPLES}`), { durationS: input.seconds });
  const { verdict, report } = evaluateRun(analysis, {
    kind: input.kind === 'rung' ? 'ladder' : input.kind,
    p99LimitMs: input.kind === 'sustained' ? input.configuration.p99LimitMs : null,
    driftLimit: input.driftLimit,
    reconciliation: { rows_written: rec.rows, quantity_gained: rec.quantity },
    probeP99Ms: input.probe.p99BudgetMs,
    interrupted: load.interrupted,
  });
  store.writeJson(`${dir}/${VERDICT}`, report);
  const gate = verdict.ingest;

  const summary = summarizeRepeat(
    { configuration: input.configuration.name, index: input.index, attempt: att, runTag, kind: input.kind, dir, cutShort: load.interrupted },
    report,
    verdict,
    { probe: input.probe.rate > 0, reconciled: gate.reconciled && rec.rows === report.events_claimed && rec.quantity === report.quantity_claimed },
  );
  store.logVerdict(summary);
  return { summary, interrupted };
}
