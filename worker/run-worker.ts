// Builds and runs the rig's worker(s). One process serves the control-plane queue `rig` and, on a
// single machine, the data-plane queue `rig-data-<host>` too (load, samplers, seeding, pgbench).
import os from 'node:os';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { connectWithin, temporalEnv, type TemporalEnv } from '../lib/temporal/connection-env';
import * as activities from '../activities';

export const CONTROL_QUEUE = 'rig';
export function dataQueue(host = os.hostname()): string {
  return `rig-data-${host}`;
}

export interface RigWorkerOptions {
  env?: TemporalEnv;
  taskQueues?: string[];
  /** Passed through to Worker.create (tests shorten shutdown grace, etc.). */
  workerOptions?: Partial<WorkerOptions>;
}

export async function connectNative(env: TemporalEnv): Promise<NativeConnection> {
  return connectWithin(env.address, () => NativeConnection.connect({ address: env.address, tls: env.tls, apiKey: env.apiKey }));
}

/** Creates the workers (one per task queue) on one connection; call `run` on each. */
export async function createRigWorkers(opts: RigWorkerOptions = {}): Promise<{ connection: NativeConnection; workers: Worker[] }> {
  const env = opts.env ?? temporalEnv();
  const connection = await connectNative(env);
  const queues = opts.taskQueues ?? [CONTROL_QUEUE, dataQueue()];
  const workers: Worker[] = [];
  for (const taskQueue of queues) {
    workers.push(
      await Worker.create({
        connection,
        namespace: env.namespace,
        taskQueue,
        workflowsPath: require.resolve('../workflows'),
        activities,
        // Heartbeats carry cancellation back to a running repeat: send them often enough that a
        // cancelled repeat stops its load within seconds (the default throttle is ~24 s here).
        defaultHeartbeatThrottleInterval: '2 seconds',
        maxHeartbeatThrottleInterval: '5 seconds',
        ...opts.workerOptions,
      }),
    );
  }
  return { connection, workers };
}
