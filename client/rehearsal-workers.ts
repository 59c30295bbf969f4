// The workers `rig rehearse` campaigns on: the rig worker already serving this host when one runs (a
// second one beside it would take half of the campaign's steps), else the rig's workers in this
// process, until the rehearsal ends.
import { CONTROL_QUEUE, createRigWorkers, dataQueue, hostQueue } from '../worker/run-worker';
import type { TemporalEnv } from '../lib/temporal/connection-env';
import { claimWorker, type WorkerRecord } from '../lib/tools/worker-lock';

export type RehearsalWorkers = { reused: WorkerRecord; stop(): Promise<void> } | { reused?: undefined; stop(): Promise<void> };

export async function rehearsalWorkers(env: TemporalEnv, host: string): Promise<RehearsalWorkers> {
  const claim = claimWorker({ host, address: env.address, namespace: env.namespace, queues: [CONTROL_QUEUE, hostQueue(host), dataQueue(host)] });
  if ('running' in claim) return { reused: claim.running, stop: async () => undefined };
  try {
    const { connection, workers } = await createRigWorkers({ env, host });
    const running = Promise.all(workers.map((w) => w.run()));
    return {
      stop: async () => {
        workers.forEach((w) => w.shutdown());
        await running.catch(() => undefined);
        await connection.close();
        claim.release();
      },
    };
  } catch (err) {
    claim.release();
    throw err;
  }
}
