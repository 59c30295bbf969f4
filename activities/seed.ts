// seed: history rows by COPY into the fixtures' partition, then settle until autovacuum and analyze
// are idle (the spec: a bulk seed leaves autovacuum busy for minutes, and the first repeat after it
// failed its gate on a 5-second stall).
// Safe to run twice: the seed tag is derived from the campaign, so a retry counts what an earlier
// attempt committed and copies only the rest (after a kill mid-settle: nothing, it just settles); the
// rollup rebuild replaces the whole rollup in one transaction. Settling ends with a CHECKPOINT, and a
// rollup rebuild is followed by another, so the first repeat meets no pages left dirty (a CHECKPOINT
// repeated by a retry is harmless). On an existing deployment it first looks
// for rows the rig did not write in the fixtures' partition (read-only), and refuses unless allowed.
import { EvidenceStore } from '../lib/evidence/store';
import { foreignRows, foreignRowsRefusal } from '../lib/targets/foreign-rows';
import { checkpoint, checkpointLine } from '../lib/targets/checkpoint';
import { emptyForFreshSeed, seed, seedTagFor, type SeedResult } from '../lib/targets/seed';
import { SettleTimeoutError } from '../lib/targets/settle';
import { rebuildRollup } from '../reference/rollup';
import type { SeedInput, StepSummary } from './contract';
import { attempt, cancellationSignal, heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusal, refusing } from './refusal';

/**
 * Heartbeats come from a timer, not from the rows: a COPY held back by the server, the counts and the
 * rollup rebuild are single long statements, and the attempt must stay visibly alive through them.
 */
const HEARTBEAT_EVERY_MS = 5000;

export interface SeedHeartbeat {
  phase: 'start' | 'count' | 'copy' | 'settle' | 'rollup';
  /** rows under the campaign's seed tag: committed plus in flight */
  rows: number;
  committed: number;
  total: number;
  attempt: number;
}

export function seedActivities(deps: ActivityDeps) {
  return { seedHistory: (input: SeedInput) => seedHistoryWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { seedHistory } = seedActivities(defaultDeps);

async function seedHistoryWith(deps: ActivityDeps, input: SeedInput): Promise<StepSummary> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  if (input.rows === 0) return { summary: 'no history rows asked for' };
  const { ownerUrl, superuserUrl } = await rigTarget(deps, input.rig).dbUrls(input.campaignId);
  const signal = cancellationSignal();
  let details: SeedHeartbeat = { phase: 'start', rows: 0, committed: 0, total: input.rows, attempt: attempt() };
  const beat = () => heartbeat(details);
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  beat();
  try {
    let lastLog = 0;
    let res: SeedResult;
    if (input.foreignRows) {
      // An existing deployment: someone else's rows in the partition stop the seed unless allowed.
      const found = await foreignRows(ownerUrl);
      if (found.rows > 0 && input.foreignRows === 'refuse') throw refusal('SeedRefusal', foreignRowsRefusal(found), found);
      if (found.rows > 0) store.logWarning(`seed: the fixtures' partition holds ${found.atLeast ? 'more than ' : ''}${found.rows} row(s) the rig did not write; seeding anyway (seed.allowForeignRows)`);
    }
    const tag = input.fresh ? seedTagFor(`${input.campaignId}/${input.fresh}`) : seedTagFor(input.campaignId);
    if (input.fresh) {
      const removed = await emptyForFreshSeed(ownerUrl, tag);
      store.appendLog('info', removed ? `seed: a fresh history for variant ${input.fresh}: usage_events emptied (${removed} rows)` : `seed: variant ${input.fresh}'s history is under way already (tag ${tag}): resuming it`);
    }
    try {
      res = await refusing(() =>
        seed({
          ownerUrl,
          rows: input.rows,
          tag,
          signal,
          settle: { timeoutMs: input.settleTimeoutSeconds * 1000 },
          checkpointUrl: superuserUrl,
          onProgress: (p) => {
            details = { phase: p.phase, rows: p.rows, committed: p.committed, total: p.total, attempt: details.attempt };
            beat();
            if (p.elapsedMs - lastLog >= 10_000) {
              lastLog = p.elapsedMs;
              store.appendLog('info', `seed ${p.phase}: ${p.rows}/${p.total} rows, ${Math.round(p.rowsPerSec)} rows/s`);
            }
          },
        }),
      );
    } catch (err) {
      // A retry would wait on the same autovacuum: stop the campaign with what it was doing (teardown runs).
      if (err instanceof SettleTimeoutError) throw refusal('SettleRefusal', err.message, { table: err.table, state: err.state, autovacuum: err.autovacuum });
      throw err;
    }
    const resumed = res.alreadyIn > 0 ? `; ${res.alreadyIn} were already in from an earlier attempt, ${res.copiedRows} copied` : '';
    store.appendLog('info', `seed: ${res.verifiedRows} rows under tag ${res.tag}${resumed}`);
    if (res.checkpoint) store.appendLog(res.checkpoint.error ? 'warning' : 'info', `seed: ${checkpointLine(res.checkpoint)}`);
    let last = res.checkpoint;
    if (input.rebuildRollup) {
      signal?.throwIfAborted();
      details = { ...details, phase: 'rollup' };
      beat();
      const n = await rebuildRollup(ownerUrl);
      store.appendLog('info', `seed: daily rollup rebuilt (${n} rows) for HC_AGGREGATE=rollup`);
      last = await checkpoint(superuserUrl, 'after the rollup rebuild');
      store.appendLog(last.error ? 'warning' : 'info', `seed: ${checkpointLine(last)}`);
    }
    const rate = res.copiedRows > 0 ? ` at ${Math.round(res.rowsPerSec)} rows/s` : '';
    const settle = res.settle ? `; autovacuum settled after ${res.settle.seconds.toFixed(1)} s` : '';
    const ckpt = last ? (last.error ? '; no CHECKPOINT (refused)' : '; then a CHECKPOINT') : '';
    const summary = `${res.verifiedRows} rows (tag ${res.tag}) in livemode=${res.livemode}${rate}${resumed}${settle}${ckpt}`;
    store.appendLog('info', `seed: ${summary}`);
    return { summary };
  } finally {
    clearInterval(timer);
  }
}
