// A whole campaign environment for end-to-end tests: a Temporal dev server made by `rig dev up`'s own
// code (so it can be restarted on the same database), state and results in a temporary folder, and
// rig workers either in this process or as `rig worker` child processes (which a test may SIGKILL).
import type { ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { progressQuery, type CampaignProgress } from '../../workflows/messages';
import './temporal';
import { startCampaignServer } from './campaign-server';
import { spawnRigWorker } from './worker-process';
import { devDown, devUp, type DevServerOptions } from '../../client/dev-server';
import type { CleanCheckResult } from '../../lib/targets/target';
import { resolveBuildId } from '../../lib/tools/build-id';
import type { CampaignSpecInput } from '../../lib/protocol/spec';

// The rig's worker (its activities, every target's code and the AWS SDK: ~500 modules, about 1.5 s of
// CPU to load) and the local target's clean check are loaded when a test first asks for them, not
// with this file: the tests of workflow logic on test doubles (test/campaign/doubles.ts) import it for
// waitFor and saveHistory alone. require, not import(): the sources run as CommonJS through tsx
// (as client/main.ts loads its commands).
/* eslint-disable @typescript-eslint/no-require-imports */
const runWorker = () => require('../../worker/run-worker') as typeof import('../../worker/run-worker');
const localTarget = () => require('../../lib/targets/local') as typeof import('../../lib/targets/local');
/* eslint-enable @typescript-eslint/no-require-imports */

export interface CampaignEnv {
  address: string;
  client: Client;
  dir: string;
  /** Environment for `rig` child processes (state, results, Temporal address). */
  childEnv: NodeJS.ProcessEnv;
  dev: DevServerOptions;
  restartServer(): Promise<void>;
  /** A worker in this process (default: both queues); resolves a stop function. */
  inProcessWorker(taskQueues?: string[]): Promise<() => Promise<void>>;
  /** `rig worker` as a child process (kill it with SIGKILL to simulate a crash). */
  childWorker(): Promise<ChildProcess>;
  cleanCheck(): Promise<CleanCheckResult>;
  /** Asserts `rig check --target local` would say clean, listing any leftover in the failure. */
  assertClean(): Promise<void>;
}

/** One environment per test file; torn down (workers, server, folder) when the file ends. */
export async function campaignEnv(serverOptions: Pick<DevServerOptions, 'dynamicConfig'> = {}): Promise<CampaignEnv> {
  const server = await startCampaignServer(undefined, serverOptions);
  const { dir, dev, address, client } = server;
  // One build id for every `rig worker` the file starts, fixed now: a worker restarted after an edit
  // to the tree (or a commit) mid-test would poll as another build, and a campaign pinned to the first
  // would wait for ever for a worker of its own build.
  const buildId = process.env.RIG_BUILD_ID ?? (await resolveBuildId()).buildId;
  const childEnv = { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default', RIG_BUILD_ID: buildId };
  const stops: Array<() => Promise<void>> = [];
  const children = new Set<ChildProcess>();

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await server.close();
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
    async inProcessWorker(taskQueues?: string[]) {
      const { connection: native, workers } = await runWorker().createRigWorkers({ env: { address, namespace: 'default' }, taskQueues });
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
    childWorker: () => spawnRigWorker({ env: childEnv, children }),
    cleanCheck: () => localTarget().cleanCheckLocal(),
    async assertClean() {
      const r = await localTarget().cleanCheckLocal();
      if (r.status !== 'clean') throw new Error(`not clean: ${JSON.stringify(r, null, 1)}`);
    },
  };
}

/**
 * A short campaign for tests of the orchestration: no calibration, no history, short repeats, no
 * warm-up (the spec's default is 10 s of load before the first repeat, which none of these tests
 * asserts: a test about the warm-up sets warmupSeconds itself, as rehearsal-cli, variants and
 * service-run do, and those record and replay its path). On the
 * aws target the watchdog is 180 min: AWS's plan allows RDS's creation its 60 min and provisioning
 * and teardown 15 each (lib/protocol/plan.ts), about 150 min with the margin, whatever moto takes.
 */
export function tinySpec(overrides: Partial<CampaignSpecInput> = {}): CampaignSpecInput {
  return {
    name: 'tiny',
    target: 'local',
    calibrate: false,
    watchdogMinutes: overrides.target === 'aws' ? 180 : 60,
    seed: { customers: 20, historyRows: 0 },
    sustained: {
      repeats: 3,
      repeatSeconds: 6,
      cooldownSeconds: 6,
      warmupSeconds: 0,
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
      if ((err as { fatal?: boolean }).fatal) throw err;
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? ` (last error: ${(lastErr as Error).message})` : ''}`);
}

/**
 * Polls `fn` like waitFor, but on a campaign: every poll first asks Temporal whether the workflow is
 * still running, and fails at once, with its result or failure in the message, when it has closed.
 * Every wait on a campaign in the tests goes through here, so none can outlive its workflow.
 */
export async function waitOnCampaign<T>(handle: WorkflowHandle, what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 180_000, everyMs = 250): Promise<T> {
  return waitFor(what, async () => {
    await failIfClosed(handle, what);
    return fn();
  }, timeoutMs, everyMs);
}

/** Throws a fatal error (waitFor stops polling) naming how the campaign ended, if it has. */
export async function failIfClosed(handle: WorkflowHandle, what: string): Promise<void> {
  const desc = await handle.describe();
  if (desc.status.name === 'RUNNING') return;
  const why = await handle.result().then(
    (r) => JSON.stringify(r).slice(0, 2000),
    (e: Error & { cause?: Error }) => `${e.message}: ${e.cause?.message ?? ''}`,
  );
  throw Object.assign(new Error(`the campaign ${handle.workflowId} closed (${desc.status.name}) before ${what}: ${why}`), { fatal: true });
}

/** Waits until the campaign's progress satisfies `pred`; fails at once, with why, if the campaign closes first. */
export async function waitForProgress(handle: WorkflowHandle, what: string, pred: (p: CampaignProgress) => boolean, timeoutMs = 180_000): Promise<void> {
  await waitOnCampaign(handle, what, async () => pred(await handle.query(progressQuery)), timeoutMs);
}

export { saveHistory } from './recorded-replay';
