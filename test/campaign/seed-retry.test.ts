// The seed step survives its worker: a `rig worker` SIGKILLed once mid-COPY and once mid-settle, and
// each time the next attempt finishes the step with exactly the spec's rows in the table. Mid-COPY, the
// retry copies only what the killed attempt had not committed; mid-settle, it copies nothing and only
// settles. The campaign keeps its rig (end: keep) so that the rows can be counted, then it is torn down.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import pg from 'pg';
import type { SeedHeartbeat } from '../../activities/seed';
import { teardownRig } from '../../activities/rig-lifecycle';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { seedTagFor } from '../../lib/targets/seed';
import { SEED_TAG_PROPERTY } from '../../lib/targets/seed-rows';
import { campaignEnv, tinySpec, waitFor, waitForProgress, waitOnCampaign } from '../harness/campaign';

// Five COPY transactions of 100k rows: long enough to be caught after the first and before the last.
const ROWS = 500_000;
const CHUNK = 100_000;
// Mid-settle needs every row in before the kill, not many: two chunks (still more than one COPY, and
// seconds of COPY in which the test takes its lock before autovacuum's first look at the table).
const SETTLE_ROWS = 2 * CHUNK;

// One Temporal server for both tests (made at the top level: it ends with the file).
const envReady = campaignEnv();
envReady.catch(() => undefined);

const spec = (rows = ROWS) =>
  tinySpec({
    end: 'keep',
    seed: { customers: 20, historyRows: rows },
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 0 },
  });

/** The seed activity's last recorded heartbeat, as the server has it (undefined before the first). */
async function seedHeartbeat(handle: WorkflowHandle): Promise<SeedHeartbeat | undefined> {
  const desc = await handle.describe();
  const act = desc.raw.pendingActivities?.find((a) => a.activityType?.name === 'seedHistory');
  const payload = act?.heartbeatDetails?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<SeedHeartbeat>(payload) : undefined;
}

function tooLate(what: string): Error {
  return Object.assign(new Error(`too late to kill the worker ${what}`), { fatal: true });
}

/** Rows under the campaign's seed tag, and under any seed tag at all (an old random-tag retry would add its own). */
async function countSeedRows(campaignId: string): Promise<{ tagged: number; anySeed: number }> {
  const c = new pg.Client({ connectionString: rigDbUrls(campaignId).ownerUrl });
  await c.connect();
  try {
    const [r] = (
      await c.query<{ tagged: string; any_seed: string }>(
        `SELECT count(*) FILTER (WHERE properties @> $1)::text AS tagged, count(*) FILTER (WHERE properties ? $2)::text AS any_seed FROM usage_events`,
        [JSON.stringify({ [SEED_TAG_PROPERTY]: seedTagFor(campaignId) }), SEED_TAG_PROPERTY],
      )
    ).rows;
    return { tagged: Number(r.tagged), anySeed: Number(r.any_seed) };
  } finally {
    await c.end();
  }
}

/** Sessions of the seed library (application_name rig-seed) still connected to the rig's database. */
async function seedSessions(campaignId: string): Promise<number> {
  const c = new pg.Client({ connectionString: rigDbUrls(campaignId).ownerUrl });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE application_name = 'rig-seed'`)).rows[0].n);
  } finally {
    await c.end();
  }
}

function seedSummary(result: CampaignResult): string {
  const step = result.steps.find((s) => s.step === 'seed');
  assert.equal(step?.status, 'ok', JSON.stringify(step));
  return step!.summary ?? '';
}

test('a worker killed mid-COPY: the next attempt copies only the rows not yet committed; the table holds exactly the spec\'s rows', async (t) => {
  const env = await envReady;
  const id = 'seed-retry-copy';
  const campaignId = campaignIdOf(id);
  let worker = await env.childWorker();
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec()] });

  // Kill once at least one chunk is committed and the COPY is not done.
  const seen = await waitOnCampaign(
    handle,
    'the seed to commit its first chunk',
    async () => {
      const hb = await seedHeartbeat(handle);
      if (hb && (hb.phase === 'settle' || hb.committed >= ROWS)) throw tooLate(`mid-COPY: ${JSON.stringify(hb)}`);
      return hb?.phase === 'copy' && hb.committed >= CHUNK ? hb : undefined;
    },
    300_000,
  );
  worker.kill('SIGKILL');
  worker = await env.childWorker();

  const result = (await handle.result()) as CampaignResult;
  worker.kill('SIGTERM');
  try {
    const summary = seedSummary(result);
    t.diagnostic(`seed: ${summary}`);
    const m = /; (\d+) were already in from an earlier attempt, (\d+) copied/.exec(summary);
    assert.ok(m, `the retry resumed: ${summary}`);
    const [already, copied] = [Number(m[1]), Number(m[2])];
    assert.ok(already >= seen.committed && already % CHUNK === 0, `whole chunks, at least the ${seen.committed} seen committed: ${summary}`);
    assert.equal(already + copied, ROWS);
    assert.match(summary, new RegExp(`^${ROWS} rows \\(tag ${seedTagFor(campaignId)}\\)`));
    assert.deepEqual(await countSeedRows(campaignId), { tagged: ROWS, anySeed: ROWS });
  } finally {
    await teardownRig({ campaignId, target: 'local', by: 'operator' });
  }
  await env.assertClean();
});

test('a worker killed mid-settle: the next attempt copies nothing and only settles; the table holds exactly the spec\'s rows', async (t) => {
  const env = await envReady;
  const id = 'seed-retry-settle';
  const campaignId = campaignIdOf(id);
  let worker = await env.childWorker();
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec(SETTLE_ROWS)] });

  // Keep the settle phase open for as long as the test needs: a session holding SHARE UPDATE EXCLUSIVE
  // on usage_events (what a manual VACUUM holds) keeps autovacuum off the table; the COPY is not blocked.
  await waitForProgress(handle, 'the seed step', (p) => p.step === 'seed', 300_000);
  const holder = new pg.Client({ connectionString: rigDbUrls(campaignId).ownerUrl, application_name: 'test-lock-holder' });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE usage_events IN SHARE UPDATE EXCLUSIVE MODE');
    await waitOnCampaign(handle, 'attempt 1 to settle', async () => {
      const hb = await seedHeartbeat(handle);
      if (hb && hb.attempt > 1) throw tooLate(`mid-settle: ${JSON.stringify(hb)}`);
      return hb?.phase === 'settle';
    }, 300_000);
    worker.kill('SIGKILL');
    worker = await env.childWorker();
    // The server gives up on attempt 1 at its heartbeat timeout; attempt 2 counts, finds every row, settles.
    await waitOnCampaign(handle, 'attempt 2 to settle', async () => {
      const hb = await seedHeartbeat(handle);
      return hb !== undefined && hb.attempt >= 2 && hb.phase === 'settle';
    }, 300_000);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
  }
  const result = (await handle.result()) as CampaignResult;
  worker.kill('SIGTERM');
  try {
    const summary = seedSummary(result);
    t.diagnostic(`seed: ${summary}`);
    assert.match(summary, new RegExp(`; ${SETTLE_ROWS} were already in from an earlier attempt, 0 copied; autovacuum settled after`), summary);
    assert.deepEqual(await countSeedRows(campaignId), { tagged: SETTLE_ROWS, anySeed: SETTLE_ROWS });
  } finally {
    await teardownRig({ campaignId, target: 'local', by: 'operator' });
  }
  await env.assertClean();
});

test('a campaign cancelled mid-COPY: the seed attempt stops writing (its session ends, the COPY in flight rolls back)', async () => {
  const env = await envReady;
  const id = 'seed-retry-cancel';
  const campaignId = campaignIdOf(id);
  // Twenty chunks: the cancellation (at the attempt's next heartbeat) lands long before the last one.
  const rows = 20 * CHUNK;
  const worker = await env.childWorker();
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec(rows)] });
  try {
    await waitOnCampaign(handle, 'the seed to commit its first chunk', async () => {
      const hb = await seedHeartbeat(handle);
      if (hb && (hb.phase === 'settle' || hb.committed >= rows)) throw tooLate(`to cancel mid-COPY: ${JSON.stringify(hb)}`);
      return hb?.phase === 'copy' && hb.committed >= CHUNK;
    }, 300_000);
    await handle.cancel();
    await handle.result().then(
      () => assert.fail('a cancelled campaign does not succeed'),
      () => undefined,
    );
    // The workflow has moved on (closed); the attempt learns of it at its next heartbeat and ends its session.
    await waitFor('the cancelled seed attempt to end its session', async () => (await seedSessions(campaignId)) === 0, 120_000);
    const { tagged } = await countSeedRows(campaignId);
    assert.ok(tagged % CHUNK === 0 && tagged < rows, `whole chunks only, and it stopped: ${tagged} of ${rows}`);
  } finally {
    worker.kill('SIGTERM');
    await teardownRig({ campaignId, target: 'local', by: 'operator' });
  }
  await env.assertClean();
});
