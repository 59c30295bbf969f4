// warmUp: unmeasured load at a configuration's own rate and batch against the real target, before its
// first repeat, so that repeat 1 measures the service and not its cold start (JIT, database pool,
// first plans). The generator warms itself in its child (lib/loadgen/warmup.ts); this warms the path.
//
// Its requests carry their own run tag and are reconciled like a repeat's, and everything it measured
// is kept under warmup/<config>/aA, but nothing of it is counted, gated or pooled: the report shows it
// as "warm-up, not measured". A warm-up that fails badly (nothing answered, errors, rows lost) stops
// the campaign before any measured repeat, with the reason (lib/protocol/warmup.ts).
//
// Safe to run twice: each attempt has its own run tag and folder and nothing of it counts, so a retry
// after a crash only warms again; the earlier attempt's files stay as evidence.
import { hostName } from '../lib/tools/host-name';
import { CancelledFailure } from '@temporalio/common';
import { LOAD, SAMPLES, WARMUP_FILE, warmupDir } from '../lib/evidence/layout';
import type { LoadFile, WarmupFile } from '../lib/evidence/records';
import { EvidenceStore } from '../lib/evidence/store';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { readCustomersFile } from '../lib/loadgen/customers';
import { runLoad, type ProgressLine } from '../lib/loadgen/run-load';
import { failedStatuses, judgeWarmup } from '../lib/protocol/warmup';
import { customersFile } from './bringup';
import { reconcileAttempt } from './reconcile-attempt';
import { campaignTagHash, runTagName } from './repeat';
import type { WarmupInput, WarmupOutput } from './contract';
import { attempt, cancellationSignal, heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusal } from './refusal';

/** `<campaign hash>.<config>.warmup.aA`: never the tag of a repeat (those end in .rK.aA). */
export function warmupTagFor(campaignId: string, config: string, att: number): string {
  return `${campaignTagHash(campaignId)}.${runTagName(config)}.warmup.a${att}`;
}

const ms = (us: number | null) => (us === null ? null : Math.round(us / 10) / 100);

export function warmUpActivities(deps: ActivityDeps) {
  return { warmUp: (input: WarmupInput) => warmUpWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { warmUp } = warmUpActivities(defaultDeps);

async function warmUpWith(deps: ActivityDeps, input: WarmupInput): Promise<WarmupOutput> {
  const target = rigTarget(deps, input.rig);
  const att = attempt();
  const store = EvidenceStore.forCampaign(input.campaignId);
  const c = input.configuration;
  const dir = warmupDir(c.name, att);
  const runTag = warmupTagFor(input.campaignId, c.name, att);
  store.appendLog('info', `${c.name} warm-up: ${input.seconds} s at ${c.eventsPerSecond} ev/s, batch ${c.batch}, run tag ${runTag} (not measured)`);

  const apiKey = await target.apiKeys.read(input.campaignId);
  if (!apiKey) throw new Error(`rig ${input.campaignId} has no API key yet: bring-up has not run`);

  const samplesTmp = store.tempPath(`${dir}/${SAMPLES}`);
  const startedAt = new Date().toISOString();
  const load = await runLoad(
    {
      url: input.rig.serviceUrl,
      apiKey,
      mode: 'open',
      rate: c.eventsPerSecond,
      batch: c.batch,
      seconds: input.seconds,
      maxInFlight: input.maxInFlight,
      probeRate: 0,
      customers: readCustomersFile(customersFile(target, input.campaignId)),
      runTag,
      out: samplesTmp,
    },
    (p: ProgressLine) => heartbeat({ warmup: c.name, runTag, second: p.second, sent: p.sent, failed: p.failed }),
    { signal: cancellationSignal() },
  );
  // Evidence first: the stream and what was offered, then what the database holds for the tag.
  store.commit(`${dir}/${SAMPLES}`, samplesTmp);
  const s = load.summary;
  store.writeJson(`${dir}/${LOAD}`, {
    mode: 'open',
    started_at: startedAt,
    ended_at: new Date().toISOString(),
    cut_short: load.interrupted,
    cut_reason: load.interrupted ? 'cancelled' : undefined,
    run_tag: runTag,
    rate: c.eventsPerSecond,
    batch: c.batch,
    seconds: input.seconds,
    offered: s.offered,
    sent: s.sent,
    dropped: s.dropped,
    host: hostName(),
  } satisfies LoadFile);
  if (load.interrupted && cancellationSignal()?.aborted) throw new CancelledFailure('warm-up cancelled');

  const rec = await reconcileAttempt(target, store, input.campaignId, dir, runTag);

  const { analysis, columns } = await analyzeFile(store.path(`${dir}/${SAMPLES}`), { durationS: input.seconds });
  const i = analysis.ingest;
  const statuses = failedStatuses(columns);
  const judged = judgeWarmup(i, { rows_written: rec.rows, quantity_gained: rec.quantity }, statuses);
  const out: WarmupOutput = {
    summary: `${c.name}: ${i.sent} requests in ${input.seconds} s, ${i.ok} answered 2xx, ${i.failed} failed, ${i.dropped} dropped, p99 ${ms(i.p99_us) ?? '—'} ms, ${rec.rows} rows reconciled under its own tag (warm-up, not measured)`,
    dir,
    runTag,
    sent: i.sent,
    ok: i.ok,
    failed: i.failed,
    dropped: i.dropped,
    p99Ms: ms(i.p99_us),
    rowsReconciled: rec.rows,
  };
  store.writeJson(`${dir}/${WARMUP_FILE}`, {
    configuration: c.name,
    run_tag: runTag,
    seconds: input.seconds,
    measured: false,
    ok: judged.ok,
    reasons: judged.reasons,
    failed_statuses: statuses,
    summary: out.summary,
  } satisfies WarmupFile);
  store.appendLog(judged.ok ? 'info' : 'warning', `warm-up ${out.summary}${judged.ok ? '' : `; stops the campaign: ${judged.reasons.join('; ')}`}`);
  if (!judged.ok) {
    throw refusal('WarmupRefusal', `the warm-up of ${c.name} shows the target is not ready to measure: ${judged.reasons.join('; ')}`, { dir });
  }
  return out;
}
