// The seed step survives its worker: `rig worker`s SIGKILLed while they seed two campaigns, one held
// mid-COPY and one held mid-settle, and each campaign's next attempt finishes the step with exactly the
// spec's rows in its table. Mid-COPY, the retry copies only what the killed attempt had not committed;
// mid-settle, it copies nothing and only settles. (Both at once, each campaign on a host and worker of
// its own: their heartbeat timeouts run side by side.) Each campaign keeps its rig (end: keep) so that
// the rows can be counted, then it is torn down.
// The mid-COPY kill is provoked, not caught: an uncommitted row under the key of the second chunk's
// first row holds that chunk's COPY at its first row (the table's unique key), so the kill lands with
// exactly one chunk committed and one in flight, however fast or slow the host copies.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import pg from 'pg';
import type { SeedHeartbeat } from '../../activities/seed';
import { teardownRig } from '../../activities/rig-lifecycle';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { seedTagFor } from '../../lib/targets/seed';
import { detectFixtures } from '../../lib/targets/fixtures-scope';
import { SEED_TAG_PROPERTY } from '../../lib/targets/seed-rows';
import { campaignEnv, tinySpec, waitFor, waitForProgress, waitOnCampaign, type CampaignEnv } from '../harness/campaign';
import { spawnRigWorker } from '../harness/worker-process';

// The seed's COPY transactions are of 100k rows (lib/targets/seed.ts). Mid-COPY: two of them, the
// second held at its first row until the worker is killed.
const CHUNK = 100_000;
const ROWS = 2 * CHUNK;
// Mid-settle needs every row in before the kill, not many: two chunks (still more than one COPY, and
// seconds of COPY in which the test takes its lock before autovacuum's first look at the table).
const SETTLE_ROWS = 2 * CHUNK;

// One Temporal server for the file's tests (made at the top level: it ends with the file).
const envReady = campaignEnv();
envReady.catch(() => undefined);

const spec = (rows = ROWS, host?: string) =>
  tinySpec({
    ...(host ? { host } : {}),
    end: 'keep',
    seed: { customers: 20, historyRows: rows },
    // One repeat of a second: the campaign must measure something, but nothing here is about it.
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 1, cooldownSeconds: 1, warmupSeconds: 0 },
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
async function countSeedRows(campaignId: string, ownerUrl = rigDbUrls(campaignId).ownerUrl): Promise<{ tagged: number; anySeed: number }> {
  const c = new pg.Client({ connectionString: ownerUrl });
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

/** Whether the seed's session waits on a lock in its COPY (held back at the blocked row). */
async function seedCopyWaits(campaignId: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: rigDbUrls(campaignId).ownerUrl });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_stat_activity WHERE application_name = 'rig-seed' AND wait_event_type = 'Lock' AND query LIKE 'COPY usage_events%'`,
    );
    return Number(r.rows[0].n) === 1;
  } finally {
    await c.end();
  }
}

/**
 * Holds back row `index` of the campaign's seed: an uncommitted row under that row's (tenant,
 * idempotency key) makes the seed's COPY wait when it reaches it, so the COPY of its chunk stays in
 * flight for as long as the test needs. Put in before the COPY gets there (else it waits on the COPY's
 * row, or finds it committed: too late either way).
 */
async function holdBackSeedRow(campaignId: string, index: number) {
  const { ownerUrl } = rigDbUrls(campaignId);
  const scope = await detectFixtures(ownerUrl);
  const key = `seed-${seedTagFor(campaignId)}-${index}`;
  const c = new pg.Client({ connectionString: ownerUrl, application_name: 'test-row-blocker' });
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query(`SET LOCAL lock_timeout = '5s'`);
    await c.query('INSERT INTO usage_events (tenant_id, customer_id, meter_id, quantity, idempotency_key) VALUES ($1, $2, $3, 1, $4)', [scope.tenantId, scope.customerIds[0], scope.meterId, key]);
  } catch (err) {
    await c.end();
    throw tooLate(`mid-COPY: row ${index} could not be held back (${(err as Error).message})`);
  }
  return {
    /**
     * The held COPY fails on the key (its transaction rolls back, its session ends: its worker is
     * gone); then the row goes, so that the next attempt can copy it. A rollback instead would let
     * the held COPY go on with whatever of its chunk the dead worker's socket still delivers.
     */
    async failTheCopy(): Promise<void> {
      try {
        await c.query('COMMIT');
        await waitFor('the held COPY to fail and its session to end', async () => (await seedSessions(campaignId)) === 0, 60_000);
        await c.query('DELETE FROM usage_events WHERE tenant_id = $1 AND idempotency_key = $2', [scope.tenantId, key]);
      } finally {
        await c.end();
      }
    },
    async drop(): Promise<void> {
      await c.query('ROLLBACK').catch(() => undefined);
      await c.end();
    },
  };
}

function seedSummary(result: CampaignResult): string {
  const step = result.steps.find((s) => s.step === 'seed');
  assert.equal(step?.status, 'ok', JSON.stringify(step));
  return step!.summary ?? '';
}

/** Where a host's worker keeps its state and evidence, and how the test reaches its rigs from here. */
interface Machine {
  /** The worker's own folders (none: this machine's). */
  env: NodeJS.ProcessEnv;
  /** Runs `fn` with this process's RIG_STATE_DIR and RIG_RESULTS the machine's, awaiting it if it is async. */
  within<T>(fn: () => T): T;
}

const thisMachine: Machine = { env: {}, within: (fn) => fn() };

/**
 * Another machine: a host with state and results folders of its own, as a second machine has. Its
 * campaign's rig, ledger and evidence live there, so neither machine's clean check (each campaign's
 * before it provisions, and the test's) sees the other's rig: two campaigns on one machine's folders
 * would each find the other's rig. `within` swaps this process's folders, so an awaited call goes
 * through it only where nothing else runs beside it.
 */
function otherMachine(name: string): Machine {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rig-machine-${name}-`));
  // The unprivileged PostgreSQL user must reach the clusters made under it (as scripts/run-tests.cjs does).
  fs.chmodSync(dir, 0o755);
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = { RIG_STATE_DIR: path.join(dir, 'state'), RIG_RESULTS: path.join(dir, 'results') };
  const swap = () => {
    const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
    Object.assign(process.env, env);
    return () => {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    };
  };
  return {
    env,
    within<T>(fn: () => T): T {
      const restore = swap();
      let out: T;
      try {
        out = fn();
      } catch (err) {
        restore();
        throw err;
      }
      if (out instanceof Promise) return out.finally(restore) as T;
      restore();
      return out;
    },
  };
}

interface Seeding {
  id: string;
  host: string;
  machine: Machine;
  campaignId: string;
  handle: WorkflowHandle;
}

/**
 * A campaign of the file's spec pinned to `host`: a host measures one campaign at a time (its measuring
 * lease), so two campaigns seed side by side only on two hosts, each served by its own `rig worker`.
 */
async function startSeeding(env: CampaignEnv, id: string, rows: number, host: string, machine: Machine): Promise<Seeding> {
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec(rows, host)] });
  return { id, host, machine, campaignId: campaignIdOf(id), handle };
}

/**
 * Mid-COPY, held: the second chunk's first row held back from the start of the seed step, so the first
 * chunk commits and the second's COPY waits at its first row until the test lets it fail.
 */
async function holdMidCopy({ handle, campaignId }: { handle: WorkflowHandle; campaignId: string }) {
  await waitForProgress(handle, 'the seed step', (p) => p.step === 'seed', 300_000);
  const held = await holdBackSeedRow(campaignId, CHUNK);
  try {
    await waitOnCampaign(handle, 'the second chunk\'s COPY to wait at its first row', () => seedCopyWaits(campaignId), 300_000);
    const hb = await seedHeartbeat(handle);
    assert.ok(hb?.attempt === 1 && hb.phase !== 'settle' && hb.committed <= CHUNK, `attempt 1, mid-COPY: ${JSON.stringify(hb)}`);
    return held;
  } catch (err) {
    await held.drop();
    throw err;
  }
}

/**
 * Mid-settle, held: a session holding SHARE UPDATE EXCLUSIVE on usage_events (what a manual VACUUM
 * holds) keeps autovacuum off the table, so the settle phase stays open for as long as the test needs;
 * the COPY is not blocked. Resolves once attempt 1 settles, with the lock's holder.
 */
async function holdMidSettle({ handle, campaignId, machine }: Seeding): Promise<pg.Client> {
  await waitForProgress(handle, 'the seed step', (p) => p.step === 'seed', 300_000);
  const holder = new pg.Client({ connectionString: machine.within(() => rigDbUrls(campaignId).ownerUrl), application_name: 'test-lock-holder' });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE usage_events IN SHARE UPDATE EXCLUSIVE MODE');
    await waitOnCampaign(handle, 'attempt 1 to settle', async () => {
      const hb = await seedHeartbeat(handle);
      if (hb && hb.attempt > 1) throw tooLate(`mid-settle: ${JSON.stringify(hb)}`);
      return hb?.phase === 'settle';
    }, 300_000);
    return holder;
  } catch (err) {
    await release(holder);
    throw err;
  }
}

async function release(holder: pg.Client): Promise<void> {
  await holder.query('ROLLBACK').catch(() => undefined);
  await holder.end();
}

// Two campaigns, each pinned to a host of its own (its `rig worker`; the mid-settle one's host another
// machine), one held mid-COPY and one held mid-settle; both workers SIGKILLed at once. Each campaign's next attempt (on its host's next worker,
// after the heartbeat timeout, the server's only sign that the worker died) meets what its own killed
// attempt left. The two heartbeat timeouts run at once; each campaign has its own rig, rows and assertions.
test('workers killed with one campaign mid-COPY and another mid-settle: each next attempt finishes the seed with exactly the spec\'s rows', async (t) => {
  const env = await envReady;
  const workers = new Set<ChildProcess>();
  const hostWorker = ({ host, machine }: Seeding) => spawnRigWorker({ env: { ...env.childEnv, ...machine.env, RIG_HOST: host }, children: workers, name: `host ${host}'s worker` });
  let held: Awaited<ReturnType<typeof holdMidCopy>> | undefined;
  let holder: pg.Client | undefined;
  const copying = await startSeeding(env, 'seed-retry-copy', ROWS, 'seed-copy', thisMachine);
  const settling = await startSeeding(env, 'seed-retry-settle', SETTLE_ROWS, 'seed-settle', otherMachine('seed-settle'));
  let results: CampaignResult[];
  try {
    const first = await Promise.all([hostWorker(copying), hostWorker(settling)]);
    try {
      const holds = await Promise.allSettled([holdMidCopy(copying), holdMidSettle(settling)]);
      held = holds[0].status === 'fulfilled' ? holds[0].value : undefined;
      holder = holds[1].status === 'fulfilled' ? holds[1].value : undefined;
      for (const h of holds) if (h.status === 'rejected') throw h.reason;
      // Both held: the kills land on attempt 1 of each.
      for (const w of first) w.kill('SIGKILL');
      const next = Promise.all([hostWorker(copying), hostWorker(settling)]);
      // The held COPY fails and its row goes, so that the next attempt can copy it.
      const failing = held!;
      held = undefined;
      await failing.failTheCopy();
      await next;
      // The server gives up on attempt 1 at its heartbeat timeout; attempt 2 counts, finds every row, settles.
      await waitOnCampaign(settling.handle, 'attempt 2 to settle', async () => {
        const hb = await seedHeartbeat(settling.handle);
        return hb !== undefined && hb.attempt >= 2 && hb.phase === 'settle';
      }, 300_000);
    } finally {
      await held?.drop();
      if (holder) await release(holder);
    }
    results = (await Promise.all([copying, settling].map((c) => c.handle.result()))) as CampaignResult[];
  } finally {
    // The workers go whatever the campaigns' end: the next test's runs on this machine's host.
    for (const w of workers) w.kill('SIGTERM');
  }
  const [copied, settled] = results;
  try {
    await t.test('mid-COPY: the next attempt copies only the rows not yet committed; the table holds exactly the spec\'s rows', async (tt) => {
      const summary = seedSummary(copied);
      tt.diagnostic(`seed: ${summary}`);
      const m = /; (\d+) were already in from an earlier attempt, (\d+) copied/.exec(summary);
      assert.ok(m, `the retry resumed: ${summary}`);
      assert.deepEqual([Number(m[1]), Number(m[2])], [CHUNK, ROWS - CHUNK], `the committed chunk kept, the one in flight at the kill copied again: ${summary}`);
      assert.match(summary, new RegExp(`^${ROWS} rows \\(tag ${seedTagFor(copying.campaignId)}\\)`));
      assert.deepEqual(await countSeedRows(copying.campaignId), { tagged: ROWS, anySeed: ROWS });
    });
    await t.test('mid-settle: the next attempt copies nothing and only settles; the table holds exactly the spec\'s rows', async (tt) => {
      const summary = seedSummary(settled);
      tt.diagnostic(`seed: ${summary}`);
      assert.match(summary, new RegExp(`; ${SETTLE_ROWS} were already in from an earlier attempt, 0 copied; autovacuum settled after`), summary);
      assert.deepEqual(await countSeedRows(settling.campaignId, settling.machine.within(() => rigDbUrls(settling.campaignId).ownerUrl)), { tagged: SETTLE_ROWS, anySeed: SETTLE_ROWS });
    });
  } finally {
    // One after another, nothing beside them: `within` swaps this process's folders.
    for (const c of [copying, settling]) await c.machine.within(() => teardownRig({ campaignId: c.campaignId, target: 'local', by: 'operator' }));
  }
  for (const c of [copying, settling]) await c.machine.within(() => env.assertClean());
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
