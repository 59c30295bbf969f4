// Test doubles of the rig's activities, for tests of workflow logic alone on the time-skipping
// server (timers, retries, compensation). They record their calls; nothing here measures anything.
// The real activities are exercised end to end in the rehearsal tests.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { campaignRunState } from '../../activities/campaign-state';
import { resolveSpec } from '../../activities/resolve-spec';
import { requestLease } from '../../activities/lease';
import type * as contract from '../../activities/contract';
import type { ApplyVariantInput } from '../../activities/variant';
import type { CampaignResult, RepeatSummary } from '../../lib/protocol/campaign-result';
import { PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';
import { CONTROL_QUEUE } from '../../lib/temporal/queues';
import { rigWorkflowBundle } from '../../worker/workflow-bundle-cache';
import { waitForProgress } from '../harness/campaign';

export interface Call {
  name: string;
  /** The task queue the attempt was taken from, and the workflow that scheduled it. */
  taskQueue: string;
  workflowId: string;
  /** Server time (skipped time on the test server) the attempt was scheduled at. */
  scheduledMs: number;
  input: unknown;
}

export interface DoubleOptions {
  dataQueue: string;
  /** The host these doubles serve (claimHost answers it); default DOUBLE_HOST. */
  host?: string;
  /** Told of every call as it is made (a worker in another process reports its calls so). */
  onCall?: (c: Call) => void;
  /** Repeats (configuration, index) that fail their gate. */
  failing?: Array<[string, number]>;
  /** Step whose activity refuses. */
  refuse?: 'bringUp' | 'warmUp';
  /** The clean-check after teardown finds this leftover (the campaign ends dirty). */
  leftoverAfter?: string;
  /** Bring-up's first attempt fails and asks to be retried after this long (a step that runs over its plan). */
  bringUpRetryAfter?: string;
  /** Teardown fails (retryably) every time it is run by this caller (or its first teardownFailsTimes attempts). */
  teardownFailsFor?: contract.TeardownInput['by'];
  /** With teardownFailsFor: only this many attempts by that caller fail, then it succeeds. */
  teardownFailsTimes?: number;
  /** The expiry re-tag fails (non-retryably, one attempt) for these expiry times (ISO 8601). */
  retagFailsFor?: string[];
  /** The rig has hosts of its own (aws-shaped): provision names this app queue, so prepare and service run; nodeConsoleTail answers `console`. */
  nodes?: { appQueue: string; console: string };
  /** campaignRunState answers this (from the server time of the call) instead of asking the server. */
  campaignStatus?: (serverMs: number) => string;
}

let doublesMade = 0;

/**
 * Test doubles of every activity. Each set claims a host of its own (test-1, test-2, ...) unless told
 * one: its machine-bound steps go to rig-host-<host>, and its campaigns share that host's lease. A
 * lease workflow outlives one test's workers, and on the time-skipping server a workflow bound to the
 * sticky queue of a worker that has shut down is not handed back to the normal queue: a host per set
 * keeps one test's lease out of the next test's way.
 */
export function activityDoubles(opts: DoubleOptions) {
  const host = opts.host ?? `test-${++doublesMade}`;
  const hostQueue = `rig-host-${host}`;
  const calls: Call[] = [];
  const note = (name: string, input: unknown) => {
    const info = Context.current().info;
    const call: Call = { name, input, taskQueue: info.taskQueue, workflowId: info.workflowExecution?.workflowId ?? '', scheduledMs: info.currentAttemptScheduledTimestampMs };
    calls.push(call);
    opts.onCall?.(call);
  };
  const activities = {
    // The real one (pure, local to the workflow): the spec with its defaults, recorded in the history.
    resolveSpec,
    async claimHost(): Promise<contract.ClaimHostOutput> {
      note('claimHost', {});
      return { host, hostQueue };
    },
    // The real one: it signals (with start) the host's lease workflow through the worker's client.
    async requestLease(i: contract.LeaseRequestInput): Promise<contract.LeaseRequestOutput> {
      note('requestLease', i);
      return requestLease(i);
    },
    async openCampaign(i: contract.OpenCampaignInput): Promise<contract.OpenCampaignOutput> {
      note('openCampaign', i);
      // The time-skipping server has none of the rig's search attributes registered.
      return { resultsDir: '/nonexistent', missingSearchAttributes: ['RigCampaign', 'RigTarget', 'RigStep', 'RigStatus'] };
    },
    async calibrateInstrument(i: contract.CampaignRef): Promise<contract.StepSummary> {
      note('calibrateInstrument', i);
      return { summary: 'CALIBRATED (6/6)' };
    },
    async cleanCheck(i: contract.CleanCheckInput): Promise<contract.CleanCheckOutput> {
      note('cleanCheck', i);
      if (i.phase === 'after' && opts.leftoverAfter) return { clean: false, summary: `dirty: ${opts.leftoverAfter}` };
      return { clean: true, summary: 'clean' };
    },
    async provisionRig(i: contract.ProvisionInput) {
      note('provisionRig', i);
      return {
        campaignId: i.campaignId,
        target: 'local' as const,
        dataQueue: opts.dataQueue,
        serviceUrl: 'http://127.0.0.1:1',
        database: '127.0.0.1:2',
        rigDir: '/nonexistent',
        hardware: 'double',
        parameters: {},
        ...(opts.nodes ? { appQueue: opts.nodes.appQueue } : {}),
      };
    },
    async nodeConsoleTail(i: { campaignId: string }): Promise<contract.NodeConsoleTail> {
      note('nodeConsoleTail', i);
      return opts.nodes ? { tail: opts.nodes.console } : {};
    },
    async teardownRig(i: contract.TeardownInput): Promise<contract.StepSummary> {
      note('teardownRig', i);
      const attempts = calls.filter((c) => c.name === 'teardownRig' && (c.input as contract.TeardownInput).by === i.by).length;
      if (opts.teardownFailsFor === i.by && attempts <= (opts.teardownFailsTimes ?? Infinity)) throw ApplicationFailure.retryable('pg_ctl: could not stop the server', 'Error');
      return { summary: 'removed' };
    },
    async retagRigExpiry(i: contract.RetagExpiryInput): Promise<void> {
      note('retagRigExpiry', i);
      if (opts.retagFailsFor?.includes(i.expiresAt)) throw ApplicationFailure.nonRetryable('AccessDenied: ec2:CreateTags', 'Error');
    },
    // The real one: it only asks the server how the campaign's workflow stands.
    async campaignRunState(i: contract.CampaignRunStateInput): Promise<contract.CampaignRunStateOutput> {
      note('campaignRunState', i);
      if (opts.campaignStatus) return { status: opts.campaignStatus(Context.current().info.currentAttemptScheduledTimestampMs) };
      return campaignRunState(i);
    },
    async calibrateDatabase(i: contract.DbCalibrateInput): Promise<contract.DbCalibrateOutput> {
      note('calibrateDatabase', i);
      return { summary: 'database CALIBRATED 5/5', path: 'calibration/database.json', calibrated: true, passed: 5, total: 5, failed: [] };
    },
    async bringUp(i: contract.BringUpInput): Promise<contract.StepSummary> {
      note('bringUp', i);
      if (opts.refuse === 'bringUp') throw ApplicationFailure.nonRetryable('app role cannot SELECT usage_events', 'BringupRefusal');
      if (opts.bringUpRetryAfter && Context.current().info.attempt === 1) {
        throw ApplicationFailure.create({ message: 'the service is still starting', nextRetryDelay: opts.bringUpRetryAfter });
      }
      return { summary: 'verified' };
    },
    async seedHistory(i: contract.SeedInput): Promise<contract.StepSummary> {
      note('seedHistory', i);
      return { summary: `${i.rows} rows` };
    },
    async applyVariant(i: ApplyVariantInput): Promise<contract.StepSummary & { serviceUrl: string }> {
      note('applyVariant', i);
      return { summary: `variant ${i.variant}`, serviceUrl: i.rig.serviceUrl };
    },
    async warmUp(i: contract.WarmupInput): Promise<contract.WarmupOutput> {
      note('warmUp', i);
      if (opts.refuse === 'warmUp') {
        throw ApplicationFailure.nonRetryable(`the warm-up of ${i.configuration.name} shows the target is not ready to measure: nothing answered 2xx: 40 requests sent, 40 failed (40 x 500)`, 'WarmupRefusal');
      }
      const dir = `warmup/${i.configuration.name}/a1`;
      return { summary: `${i.configuration.name}: warmed`, dir, runTag: `${i.campaignId}.${i.configuration.name}.warmup.a1`, sent: 40, ok: 40, failed: 0, dropped: 0, p99Ms: 3, rowsReconciled: 40 };
    },
    async runRepeat(i: contract.RepeatInput): Promise<contract.RepeatOutput> {
      note('runRepeat', i);
      const fails = (opts.failing ?? []).some(([c, k]) => c === i.configuration.name && k === i.index);
      const summary: RepeatSummary = {
        configuration: i.configuration.name,
        index: i.index,
        attempt: Context.current().info.attempt,
        runTag: `${i.campaignId}.${i.configuration.name}.r${i.index}`,
        kind: i.kind,
        passed: !fails,
        reasons: fails ? ['dropped: 455 requests dropped (must be 0)'] : [],
        samples: 10_000,
        dropped: fails ? 455 : 0,
        failed: 0,
        p50Ms: 10 + i.index,
        p99Ms: 20 + i.index,
        worst10sP99Ms: 30,
        drift: 1,
        deliveredRate: i.configuration.eventsPerSecond,
        freezeSeconds: 0,
        windows: 0,
        reconciled: true,
        dir: `repeats/${i.configuration.name}/r${i.index}-a1`,
        cutShort: false,
      };
      return { summary, interrupted: [] };
    },
    async runDenominator(i: contract.DenominatorInput): Promise<contract.DenominatorOutput> {
      note('runDenominator', i);
      return { legs: [{ leg: 'one-row', rowsPerSecond: 1000, rowsVerified: true }], dir: 'denominator' };
    },
    async finishCampaign(i: contract.FinishInput): Promise<contract.FinishOutput> {
      note('finishCampaign', i);
      return { resultsDir: '/nonexistent', reportPath: '/nonexistent/report.md' };
    },
  };
  return { activities, calls, host, hostQueue };
}

/**
 * A worker of the doubles on one task queue. On the shared queue `rig` it runs the rig's workflows,
 * from the one cached bundle (worker/workflow-bundle-cache.ts: a bundle per worker was about 5 s of
 * CPU, three per test); on a host's or a data plane's queue activities alone, as `rig worker`'s own
 * workers there (worker/run-worker.ts): no workflow is started or scheduled on those queues, and a
 * Worker given a bundle starts a workflow thread of its own, about 1 s of CPU each.
 */
export async function doubleWorker(connection: NativeConnection, taskQueue: string, activities: object): Promise<Worker> {
  return Worker.create({ connection, taskQueue, ...(taskQueue === CONTROL_QUEUE ? { workflowBundle: await rigWorkflowBundle() } : {}), activities });
}

/** Workers with the doubles on the control queues (shared and host) and the data queue, until `fn` settles. */
export async function withDoubleWorkers<T>(env: TestWorkflowEnvironment, doubles: ReturnType<typeof activityDoubles>, fn: () => Promise<T>, dataQueue = 'rig-data-test'): Promise<T> {
  const workers = await Promise.all(
    ['rig', doubles.hostQueue, dataQueue].map((taskQueue) =>
      doubleWorker(env.nativeConnection, taskQueue, doubles.activities),
    ),
  );
  return workers.reduce<Promise<T>>((run, w) => w.runUntil(run), fn());
}

/** Runs benchCampaign(spec) to its end on the time-skipping server, with the doubles on both queues. */
export async function runWithDoubles(env: TestWorkflowEnvironment, spec: unknown, id: string, doubles: ReturnType<typeof activityDoubles>, dataQueue = 'rig-data-test'): Promise<CampaignResult> {
  return withDoubleWorkers(env, doubles, () => env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] }) as Promise<CampaignResult>, dataQueue);
}

/**
 * The rehearsal with a 10-minute cool-down after the first warm-up (and a watchdog that covers it): the
 * campaign waits there while nothing awaits its result, so a test can act on it mid-series.
 */
export const PAUSED_REHEARSAL: CampaignSpecInput = { ...PROFILES.rehearsal, watchdogMinutes: 240, sustained: { ...PROFILES.rehearsal.sustained!, cooldownSeconds: 600 } };

/**
 * Waits, in real time, for the campaign's first cool-down (the one after the first warm-up). On the
 * time-skipping server time moves only while a test awaits a result, so a campaign with a long
 * cool-down stays there while a test acts on it. Fails at once when the campaign closes first
 * (waitForProgress); its bound is a backstop for a loaded host (a 30-s one failed CI's lease test).
 */
export function untilFirstCoolDown(handle: WorkflowHandle): Promise<void> {
  return waitForProgress(handle, 'its first cool-down', (p) => p.phase === 'cool-down');
}
