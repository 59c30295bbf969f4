// rig worker: runs the control-plane and data-plane workers until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { CONTROL_QUEUE, createRigWorkers, dataQueue } from '../../worker/run-worker';
import { temporalEnv } from '../../lib/temporal/connection-env';

export const summary = 'run the rig worker (task queues rig and rig-data-<host>) against TEMPORAL_ADDRESS';

const HELP = `usage: rig worker [--task-queue Q ...]

Runs the rig's worker on task queue '${CONTROL_QUEUE}' and '${dataQueue()}' (default), until Ctrl-C.
Reaches Temporal through TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE and, for a
remote cluster or Temporal Cloud, TEMPORAL_API_KEY or TEMPORAL_TLS_CLIENT_CERT_PATH/KEY_PATH.`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'task-queue': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const env = temporalEnv();
  const { connection, workers } = await createRigWorkers({ env, taskQueues: values['task-queue'] });
  console.log(`rig worker on ${env.address} namespace ${env.namespace}, task queues: ${workers.map((w) => w.options.taskQueue).join(', ')}`);
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    await connection.close();
  }
  return 0;
}
