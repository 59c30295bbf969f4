// A whole campaign environment for end-to-end tests: a Temporal dev server made by `rig dev up`'s own
// code (so it can be restarted on the same database), state and results in a temporary folder, and
// rig workers either in this process or as `rig worker` child processes (which a test may SIGKILL).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import './temporal';
import { devDown, devUp, type DevServerOptions } from '../../client/dev-server';
import { cleanCheckLocal } from '../../lib/targets/local';
import type { CleanCheckResult } from '../../lib/targets/target';
import { freePort } from '../../lib/tools/free-port';
import type { CampaignSpecInput } from '../../lib/protocol/spec';
import { createRigWorkers } from '../../worker/run-worker';

const root = path.resolve(__dirname, '..', '..');

export interface CampaignEnv {
  address: string;
  client: Client;
  dir: string;
  /** Environment for `rig` child processes (state, results, Temporal address). */
  childEnv: NodeJS.ProcessEnv;
  dev: DevServerOptions;
  restartServer(): Promise<void>;
  /** A worker in this process; resolves a stop function. */
  inProcessWorker(): Promise<() => Promise<void>>;
  /** `rig worker` as a child process (kill it with SIGKILL to simulate a crash). */
  childWorker(): Promise<ChildProcess>;
  cleanCheck(): Promise<CleanCheckResult>;
}

/** One environment per test file; torn down (workers, server, folder) when the file ends. */
export async function campaignEnv(): Promise<CampaignEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-e2e-'));
  fs.chmodSync(dir, 0o755);
  // Activities in this process read these at call time.
  process.env.RIG_STATE_DIR = path.join(dir, 'state');
  process.env.RIG_RESULTS = path.join(dir, 'results');
  const dev: DevServerOptions = { ip: '127.0.0.1', port: await freePort(), uiPort: await freePort(), dir: path.join(dir, 'temporal') };
  await devUp(dev);
  const address = `127.0.0.1:${dev.port}`;
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const childEnv = { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' };
  const stops: Array<() => Promise<void>> = [];
  const children = new Set<ChildProcess>();

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await devDown(dev);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  return {
    address,
    client,
    dir,
    childEnv,
    dev,
    async restartServer() {
      await devDown(dev);
      await devUp(dev);
    },
    async inProcessWorker() {
      const { connection: native, workers } = await createRigWorkers({ env: { address, namespace: 'default' } });
      const running = Promise.all(workers.map((w) => w.run()));
      const stop = async () => {
        workers.forEach((w) => {
          if (w.getState() === 'RUNNING') w.shutdown();
        });
        await running.catch(() => undefined);
        await native.close().catch(() => undefined);
      };
      stops.push(stop);
      return stop;
    },
    async childWorker() {
      const child = spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'worker'], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      child.on('exit', () => children.delete(child));
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const onData = (d: Buffer) => {
          out += d.toString();
          if (out.includes('rig worker on')) resolve();
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
        child.once('exit', (code) => reject(new Error(`rig worker exited (${code}) before it was ready:\n${out}`)));
      });
      return child;
    },
    cleanCheck: () => cleanCheckLocal(),
  };
}

/** A short campaign for tests of the orchestration: no calibration, no history, short repeats. */
export function tinySpec(overrides: Partial<CampaignSpecInput> = {}): CampaignSpecInput {
  return {
    name: 'tiny',
    target: 'local',
    calibrate: false,
    watchdogMinutes: 30,
    seed: { customers: 20, historyRows: 0 },
    sustained: {
      repeats: 3,
      repeatSeconds: 6,
      cooldownSeconds: 6,
      configurations: [{ name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 1000 }],
    },
    ...overrides,
  };
}

/** Polls until `pred` holds (or throws after timeoutMs), returning its truthy value. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 120_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? ` (last error: ${(lastErr as Error).message})` : ''}`);
}
