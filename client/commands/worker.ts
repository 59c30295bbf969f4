// rig worker: runs the control-plane and data-plane workers until SIGINT/SIGTERM.
import { defineCommand } from '../command';
import { CONTROL_QUEUE, createRigWorkers, dataQueue, hostQueue } from '../../worker/run-worker';
import { loadConnection } from '../../lib/temporal/connection-env';
import { describeConnection } from '../../lib/temporal/connection-sources';
import { hostName, workerHostIdentity } from '../../lib/tools/host-name';
import { claimWorker } from '../../lib/tools/worker-lock';

/**
 * On SIGTERM or Ctrl-C the worker stops taking work and lets what runs finish for this long: at least
 * a repeat's length (10 minutes on the full profile), so a deploy does not cut a repeat short.
 */
export const SHUTDOWN_GRACE = '11 minutes';

export const summary = 'run the rig worker (task queues rig, rig-host-<host> and rig-data-<host>) against the Temporal the CLI would reach (rig doctor)';

const HELP = `usage: rig worker [--task-queue Q ...]

Runs the rig's worker on task queues '${CONTROL_QUEUE}', '${hostQueue(hostName())}' and '${dataQueue(hostName())}' (default),
until Ctrl-C. A campaign's first step, taken from '${CONTROL_QUEUE}', claims the host of the worker that
took it; every step that acts on that machine (calibrate, clean-check, provision, teardown, report)
then goes to that host's own queue. The host name is RIG_HOST when set, else the one kept in the
state folder (state/host-id), written by the first worker started there from the machine's name: it
stays when the machine's name changes (a container restarted), so campaigns in flight are still served.
Connects the way the \`temporal\` CLI does: TEMPORAL_* variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_API_KEY, TEMPORAL_TLS_*) over the profile TEMPORAL_PROFILE names in temporal.toml
(TEMPORAL_CONFIG_FILE); default 127.0.0.1:7233, namespace default. \`rig doctor\` shows what it will use.`;

export const { run } = defineCommand({
  summary,
  help: HELP,
  options: { 'task-queue': { type: 'string', multiple: true } },
  async run({ values }) {
    const loaded = loadConnection();
    const env = loaded.env;
    // Said at start: a worker that quietly dials the default while the CLI uses a profile is the mistake to catch.
    const addressFrom = describeConnection(loaded).find((l) => l.setting === 'address')?.from ?? 'default';
    const { host, from: hostFrom } = workerHostIdentity();
    const queues = values['task-queue'] ?? [CONTROL_QUEUE, hostQueue(host), dataQueue(host)];
    const claim = claimWorker({ host, address: env.address, namespace: env.namespace, queues });
    if ('running' in claim) {
      const r = claim.running;
      console.error(`rig worker: a rig worker (pid ${r.pid}, since ${r.startedAt}) already serves host ${host} on ${r.address} namespace ${r.namespace}; stop it first, or give this one another host name (RIG_HOST)`);
      return 2;
    }
    try {
      const { connection, workers } = await createRigWorkers({ env, host, taskQueues: queues, workerOptions: { shutdownGraceTime: SHUTDOWN_GRACE } });
      console.log(`rig worker on ${env.address} (from ${addressFrom}; rig doctor shows every setting) namespace ${env.namespace}, host ${host} (from ${hostFrom}), task queues: ${workers.map((w) => w.options.taskQueue).join(', ')}`);
      try {
        await Promise.all(workers.map((w) => w.run()));
      } finally {
        await connection.close();
      }
    } finally {
      claim.release();
    }
    return 0;
  },
});
