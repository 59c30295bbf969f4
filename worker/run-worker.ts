// Builds and runs the rig's worker(s). One process serves the shared queue `rig`, its host's own queue
// `rig-host-<host>` (the machine-bound steps of the campaigns it claimed) and, on a single machine, the
// data-plane queue `rig-data-<host>` too (load, samplers, seeding, pgbench). Its activities are built by
// createActivities with the target registry: the one place a worker chooses what the activities reach.
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { rigWorkflowBundle } from './workflow-bundle-cache';
import { connectionOptions, connectWithin, temporalEnv, type TemporalEnv } from '../lib/temporal/connection-env';
import { CONTROL_QUEUE, dataQueue, hostQueue } from '../lib/temporal/queues';
import { hostName } from '../lib/tools/host-name';
import { createActivities } from '../activities/factory';
import { claimHostFor } from '../activities/host';
import { targetFor } from '../lib/targets/registry';
import type { DeploymentVersion } from '../lib/temporal/deployment';

export { CONTROL_QUEUE, dataQueue, hostName, hostQueue, rigWorkflowBundle };

export interface RigWorkerOptions {
  env?: TemporalEnv;
  /** The host this worker serves (default RIG_HOST or the OS's host name): its claims name its queues. */
  host?: string;
  taskQueues?: string[];
  /**
   * The Worker Deployment version this worker polls as (`rig worker`: deployment `rig`, the build id
   * of lib/tools/build-id.ts). Unset: an unversioned worker (the tests' in-process workers). Workflows
   * default to AUTO_UPGRADE; benchCampaign declares itself PINNED (workflows/index.ts).
   */
  version?: DeploymentVersion;
  /** Passed through to Worker.create (tests shorten shutdown grace, etc.). */
  workerOptions?: Partial<WorkerOptions>;
}

/**
 * Workflows run on the shared queue `rig` only: a campaign is started there, its watchdog is its child
 * (the parent's queue) and the host lease is signal-with-started there (activities/lease.ts). A host's
 * and a data plane's queues carry activities alone, so their workers poll for no workflow task.
 */
function runsWorkflows(taskQueue: string): boolean {
  return taskQueue === CONTROL_QUEUE;
}

export async function connectNative(env: TemporalEnv): Promise<NativeConnection> {
  // The same options as the client's (connection-env.ts): the worker follows the CLI's profile too.
  return connectWithin(env, () => NativeConnection.connect(connectionOptions(env)));
}

/** Creates the workers (one per task queue) on one connection; call `run` on each. */
export async function createRigWorkers(opts: RigWorkerOptions = {}): Promise<{ connection: NativeConnection; workers: Worker[] }> {
  const env = opts.env ?? temporalEnv();
  const connection = await connectNative(env);
  const host = opts.host ?? hostName();
  const queues = opts.taskQueues ?? [CONTROL_QUEUE, hostQueue(host), dataQueue(host)];
  const workers: Worker[] = [];
  for (const taskQueue of queues) {
    workers.push(
      await Worker.create({
        connection,
        namespace: env.namespace,
        taskQueue,
        ...(runsWorkflows(taskQueue) ? { workflowBundle: await rigWorkflowBundle() } : {}),
        activities: { ...createActivities({ targetFor }), claimHost: claimHostFor(host) },
        // Heartbeats carry cancellation back to a running repeat: send them often enough that a
        // cancelled repeat stops its load within seconds (the default throttle is ~24 s here).
        defaultHeartbeatThrottleInterval: '2 seconds',
        maxHeartbeatThrottleInterval: '5 seconds',
        ...(opts.version ? { workerDeploymentOptions: { useWorkerVersioning: true, version: opts.version, defaultVersioningBehavior: 'AUTO_UPGRADE' as const } } : {}),
        ...opts.workerOptions,
      }),
    );
  }
  return { connection, workers };
}
