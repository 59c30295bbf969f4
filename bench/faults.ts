// npm run faults [-- --only NAME[,NAME]]: the fault matrix. One small campaign per row on a private dev
// server and the local rig, with `rig worker` child processes; each row provokes one fault at one
// step (a worker SIGKILLed there, the dev server restarted, the campaign terminated, two workers on
// two host names, no data-plane worker) and then lets the campaign run to its end. For each row: how
// the campaign ended, repeats counted against planned (and attempts interrupted, never counted), rows
// in the table against the spec, what `rig check` finds afterwards, and the minutes from the fault
// until the machine was clean. Prints a table (docs/benchmarks.md keeps the last one); never pass/fail.
// Long (about 45 minutes on a 2-core machine): run by hand. CI keeps the quick rows as tests
// (outage: a worker killed mid-repeat and mid-cool-down, the dev server restarted; seed-retry,
// stop-paths, no-worker, host-queues).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pg from 'pg';
import { pgConfig } from '../lib/pg/connection';
import type { SeedHeartbeat } from '../activities/seed';
import { devDown, devUp } from '../client/dev-server';
import { campaignIdOf } from '../lib/protocol/campaign-id';
import { campaignDir, REPEATS_DIR } from '../lib/evidence/layout';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../lib/protocol/spec';
import { cleanCheckLocal } from '../lib/targets/local';
import { rigDbUrls } from '../lib/targets/local/connection';
import { hostName } from '../lib/tools/host-name';
import { progressQuery, type CampaignProgress } from '../workflows/messages';
import { startCampaignServer, type CampaignServer } from '../test/harness/campaign-server';
import { spawnRigWorker } from '../test/harness/worker-process';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const ROWS = 300_000;
const REPEATS = 2;

/** Small, but every step is there: calibration only where it is the step under test. */
function spec(overrides: Partial<CampaignSpecInput> = {}): CampaignSpecInput {
  return {
    name: 'faults',
    target: 'local',
    calibrate: false,
    watchdogMinutes: 60,
    seed: { customers: 20, historyRows: ROWS, settleTimeoutSeconds: 300 },
    sustained: { repeats: REPEATS, repeatSeconds: 8, cooldownSeconds: 6, warmupSeconds: 0, configurations: [{ name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 1000 }] },
    ceiling: { workers: 4, batch: 100, seconds: 8 },
    denominator: { batch: 100, clients: 4, seconds: 5 },
    ...overrides,
  };
}

interface Ctx {
  server: CampaignServer;
  handle: WorkflowHandle;
  /** The worker in charge now (a row may replace it). */
  worker: ChildProcess;
  startWorker(env?: NodeJS.ProcessEnv, args?: string[]): Promise<ChildProcess>;
}

interface Row {
  name: string;
  spec?: CampaignSpecInput;
  /** Workers to start with (default one `rig worker`). */
  workers?: (ctx: Omit<Ctx, 'handle' | 'worker'>) => Promise<ChildProcess[]>;
  /** Provokes the fault; resolves with a note on what was done, or 'missed: ...'. */
  fault(ctx: Ctx): Promise<string>;
}

async function progress(h: WorkflowHandle): Promise<CampaignProgress | undefined> {
  return h.query(progressQuery).catch(() => undefined);
}

/** Polls until pred holds on the progress; undefined when the campaign closed first. */
async function when(h: WorkflowHandle, pred: (p: CampaignProgress) => boolean, timeoutMs = 600_000): Promise<CampaignProgress | undefined> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const d = await h.describe();
    if (d.status.name !== 'RUNNING') return undefined;
    const p = await progress(h);
    if (p && pred(p)) return p;
    await new Promise((r) => setTimeout(r, 150));
  }
  return undefined;
}

async function seedHeartbeat(h: WorkflowHandle): Promise<SeedHeartbeat | undefined> {
  const act = (await h.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'seedHistory');
  const payload = act?.heartbeatDetails?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<SeedHeartbeat>(payload) : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILLs the worker at the step `pred` finds (after `afterMs`), then starts a new one. */
function killAt(what: string, pred: (p: CampaignProgress) => boolean, afterMs = 0): Row['fault'] {
  return async (ctx) => {
    if (!(await when(ctx.handle, pred))) return `missed: the campaign closed before ${what}`;
    await sleep(afterMs);
    const still = await progress(ctx.handle);
    if (!still || !pred(still)) return `missed: ${what} was over before the kill`;
    ctx.worker.kill('SIGKILL');
    ctx.worker = await ctx.startWorker();
    return `worker SIGKILLed ${afterMs ? `${afterMs / 1000} s into` : 'at'} ${what}`;
  };
}

const ROWS_OF_MATRIX: Row[] = [
  { name: 'kill: calibrate', spec: spec({ calibrate: true }), fault: killAt('calibrate', (p) => p.step === 'calibrate', 5000) },
  { name: 'kill: provision', fault: killAt('provision', (p) => p.step === 'provision') },
  { name: 'kill: bring-up', fault: killAt('bring-up', (p) => p.step === 'bring-up') },
  {
    name: 'kill: seed COPY',
    async fault(ctx) {
      const end = Date.now() + 300_000;
      while (Date.now() < end) {
        const hb = await seedHeartbeat(ctx.handle).catch(() => undefined);
        if (hb && (hb.phase === 'settle' || hb.committed >= ROWS)) return `missed: the COPY was done (${JSON.stringify(hb)})`;
        if (hb?.phase === 'copy' && hb.committed >= 100_000) {
          ctx.worker.kill('SIGKILL');
          ctx.worker = await ctx.startWorker();
          return `worker SIGKILLed mid-COPY (${hb.committed} rows committed)`;
        }
        await sleep(100);
      }
      return 'missed: no COPY seen';
    },
  },
  {
    name: 'kill: settle',
    async fault(ctx) {
      // A session holding SHARE UPDATE EXCLUSIVE on usage_events keeps autovacuum off it: settle waits.
      if (!(await when(ctx.handle, (p) => p.step === 'seed'))) return 'missed: no seed step';
      const holder = new pg.Client(pgConfig(rigDbUrls(campaignIdOf(ctx.handle.workflowId)).ownerUrl, { application_name: 'faults-lock-holder' }));
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE usage_events IN SHARE UPDATE EXCLUSIVE MODE');
        const end = Date.now() + 300_000;
        while (Date.now() < end) {
          const hb = await seedHeartbeat(ctx.handle).catch(() => undefined);
          if (hb?.phase === 'settle') {
            ctx.worker.kill('SIGKILL');
            ctx.worker = await ctx.startWorker();
            return 'worker SIGKILLed mid-settle';
          }
          await sleep(100);
        }
        return 'missed: no settle seen';
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end().catch(() => undefined);
      }
    },
  },
  { name: 'kill: repeat', fault: killAt('repeat 1', (p) => p.phase === 'repeat' && p.repeat?.k === 1, 3000) },
  { name: 'kill: cool-down', fault: killAt('the cool-down after repeat 1', (p) => p.phase === 'cool-down' && p.lastVerdicts.length >= 1, 1000) },
  { name: 'kill: ceiling', fault: killAt('the ceiling', (p) => p.step === 'ceiling', 3000) },
  { name: 'kill: denominator', fault: killAt('the denominator', (p) => p.step === 'denominator', 3000) },
  { name: 'kill: teardown', fault: killAt('teardown', (p) => p.step === 'teardown') },
  {
    name: 'dev-server restart',
    async fault(ctx) {
      if (!(await when(ctx.handle, (p) => p.phase === 'repeat' && p.repeat?.k === 1))) return 'missed: no repeat 1';
      await sleep(2000);
      await devDown(ctx.server.dev);
      await devUp(ctx.server.dev);
      return 'dev server stopped and started again (same database) during repeat 1';
    },
  },
  {
    name: 'terminate',
    async fault(ctx) {
      if (!(await when(ctx.handle, (p) => p.phase === 'repeat' && p.repeat?.k === 1))) return 'missed: no repeat 1';
      await ctx.handle.terminate('faults: terminated during repeat 1');
      return 'campaign terminated during repeat 1 (its watchdog tears down)';
    },
  },
  {
    name: 'two workers',
    workers: async (ctx) => [await ctx.startWorker({ RIG_HOST: 'faults-alpha' }), await ctx.startWorker({ RIG_HOST: 'faults-beta' })],
    async fault(ctx) {
      const p = await when(ctx.handle, (q) => q.host !== undefined);
      return p ? `two workers (hosts faults-alpha, faults-beta); claimed by ${p.host}` : 'missed: no host claimed';
    },
  },
  {
    name: 'no data worker',
    spec: spec({ workerWaitSeconds: 20 }),
    workers: async (ctx) => [await ctx.startWorker({}, ['--task-queue', 'rig', '--task-queue', `rig-host-${hostName()}`])],
    async fault() {
      return `only rig and rig-host-${hostName()} polled; workerWaitSeconds 20`;
    },
  },
];

interface Outcome {
  name: string;
  fault: string;
  status: string;
  repeats: string;
  rows: string;
  check: string;
  cleanMinutes: string;
  evidence: string;
}

async function untilClean(limitMs: number): Promise<{ clean: boolean; summary: string }> {
  const end = Date.now() + limitMs;
  for (;;) {
    const r = await cleanCheckLocal({ scope: 'state' });
    if (r.status === 'clean' || Date.now() > end) {
      return { clean: r.status === 'clean', summary: r.status === 'clean' ? 'clean' : r.status === 'dirty' ? `DIRTY: ${r.leftovers.map((l) => l.kind).join(', ')}` : `could not look: ${r.reason}` };
    }
    await sleep(5000);
  }
}

/** Every counted repeat has its verdict on disk; every interrupted attempt kept its folder. */
function evidenceOf(r: CampaignResult | undefined, campaignId: string): string {
  if (!r?.resultsDir) {
    // No result (a terminated campaign): what its folder kept, attempt by attempt.
    const repeats = path.join(campaignDir(campaignId), REPEATS_DIR);
    const attempts = fs.existsSync(repeats) ? fs.readdirSync(repeats).flatMap((c) => fs.readdirSync(path.join(repeats, c)).map((a) => path.join(repeats, c, a))) : [];
    if (!attempts.length) return 'no repeat folder';
    const verdicts = attempts.filter((a) => fs.existsSync(path.join(a, 'verdict.json'))).length;
    return `${attempts.length} attempt folder(s) kept, ${verdicts} with a verdict (no result: the report step never ran)`;
  }
  const verdicts = r.repeats.filter((x) => fs.existsSync(path.join(r.resultsDir, x.dir, 'verdict.json'))).length;
  const kept = r.interrupted.filter((i) => i.dir && fs.existsSync(path.join(r.resultsDir, i.dir))).length;
  return `${verdicts}/${r.repeats.length} verdicts, ${kept}/${r.interrupted.length} interrupted kept`;
}

async function runRow(server: CampaignServer, row: Row, n: number): Promise<Outcome> {
  const children = new Set<ChildProcess>();
  const childEnv = { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };
  const startWorker = (env: NodeJS.ProcessEnv = {}, args: string[] = []) => spawnRigWorker({ env: { ...childEnv, ...env }, args, children });
  const workers = row.workers ? await row.workers({ server, startWorker }) : [await startWorker()];
  const id = `faults-${n}-${row.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`;
  const handle = await server.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [row.spec ?? spec()] });
  const ctx: Ctx = { server, handle, worker: workers[0], startWorker };
  let fault: string;
  try {
    fault = await row.fault(ctx);
  } catch (err) {
    fault = `fault not provoked: ${(err as Error).message.split('\n')[0]}`;
  }
  const faultAt = Date.now();
  console.error(`  ${row.name}: ${fault}`);
  const result = await handle.result().then(
    (r) => r as CampaignResult,
    (e: Error & { cause?: { details?: CampaignResult[]; message?: string } }) => e.cause?.details?.[0],
  );
  const status = (await handle.describe()).status.name;
  // A terminated campaign's rig goes with its watchdog (within one 2-minute check).
  const clean = await untilClean(status === 'TERMINATED' ? 5 * 60_000 : 60_000);
  const cleanMinutes = clean.clean ? ((Date.now() - faultAt) / 60_000).toFixed(1) : `not clean after ${((Date.now() - faultAt) / 60_000).toFixed(1)}`;
  for (const c of children) c.kill('SIGTERM');
  await sleep(500);
  for (const c of children) c.kill('SIGKILL');
  const seed = result?.steps.find((s) => s.step === 'seed');
  const seeded = seed?.status === 'ok' ? /^(\d+) rows/.exec(seed.summary)?.[1] : undefined;
  const planned = REPEATS;
  const sustained = result?.repeats.filter((r) => r.kind === 'sustained') ?? [];
  return {
    name: row.name,
    fault,
    status: result ? `${result.status}${result.error ? ` (${result.error.slice(0, 200)})` : ''}` : status.toLowerCase(),
    repeats: result ? `${sustained.length}/${planned}${result.interrupted.length ? `, ${result.interrupted.length} interrupted` : ''}` : '—',
    rows: seeded ? `${Number(seeded).toLocaleString('en-US')} / ${ROWS.toLocaleString('en-US')}` : `— / ${ROWS.toLocaleString('en-US')}`,
    check: clean.summary,
    cleanMinutes,
    evidence: evidenceOf(result, campaignIdOf(id)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const only = values.only?.split(',').map((s) => s.trim().toLowerCase());
  const rows = ROWS_OF_MATRIX.filter((r) => !only || only.some((o) => r.name.toLowerCase().includes(o)));
  const server = await startCampaignServer('rig-faults-');
  const started = Date.now();
  const outcomes: Outcome[] = [];
  try {
    for (const [i, row] of rows.entries()) {
      console.error(`row ${i + 1}/${rows.length}: ${row.name} ...`);
      const o = await runRow(server, row, i + 1);
      outcomes.push(o);
      // Each row as it ends, so a matrix cut short still shows what it measured.
      console.error(`  -> ${o.status}; repeats ${o.repeats}; rows ${o.rows}; ${o.check}; ${o.cleanMinutes} min; ${o.evidence}`);
    }
  } finally {
    await server.close();
  }
  const cpus = os.cpus();
  console.log(`\nfault matrix on ${cpus.length} × ${cpus[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 16)}Z, ${((Date.now() - started) / 60_000).toFixed(0)} min`);
  console.log(`campaign per row: ${REPEATS} repeats x 8 s, 6-s cool-downs, ${ROWS.toLocaleString('en-US')} seeded rows, ceiling 8 s, denominator 4 x 5 s; no calibration except its own row\n`);
  const header = ['fault', 'what was done', 'end status', 'repeats counted / planned', 'rows / spec', 'rig check after', 'min to clean', 'evidence'];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const o of outcomes) console.log(`| ${[o.name, o.fault, o.status, o.repeats, o.rows, o.check, o.cleanMinutes, o.evidence].join(' | ')} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
