// rig worker: runs the control-plane and data-plane workers until SIGINT/SIGTERM.
import os from 'node:os';
import { Runtime } from '@temporalio/worker';
import { defineCommand } from '../command';
import { CONTROL_QUEUE, connectNative, createRigWorkers, dataQueue, hostQueue } from '../../worker/run-worker';
import { loadConnection } from '../../lib/temporal/connection-env';
import { describeConnection } from '../../lib/temporal/connection-sources';
import { hostName, workerHostIdentity } from '../../lib/tools/host-name';
import { bootId, claimWorker } from '../../lib/tools/worker-lock';
import { hostOfQueue } from '../../lib/temporal/queues';
import { machineOf, rigWorkerIdentity } from '../../lib/temporal/worker-identity';
import { otherMachineRefusal, otherMachinesPolling } from '../../lib/temporal/host-queue-owner';
import { resolveBuildId } from '../../lib/tools/build-id';
import { deploymentName, type DeploymentVersion } from '../../lib/temporal/deployment';
import { takeCurrentVersion, whenDrained } from '../../worker/versioning';

/**
 * On SIGTERM or Ctrl-C the worker stops taking work and lets what runs finish for this long: at least
 * a repeat's length (10 minutes on the full profile), so a deploy does not cut a repeat short.
 */
export const SHUTDOWN_GRACE = '11 minutes';

/**
 * How long another machine's poller may go without polling and still count as live (RIG_POLLER_LIVE_SECONDS,
 * default 75: the server's long poll of 1 minute, plus slack). Shorter only against a server whose
 * matching.longPollExpirationInterval is shorter.
 */
function pollerLiveMs(): number {
  const s = Number(process.env.RIG_POLLER_LIVE_SECONDS ?? 75);
  return (Number.isFinite(s) && s > 0 ? s : 75) * 1000;
}

/** How often a worker whose build is no longer current asks whether its last pinned campaign has closed (RIG_DRAIN_CHECK_SECONDS). */
function drainCheckMs(): number {
  const s = Number(process.env.RIG_DRAIN_CHECK_SECONDS ?? 60);
  return (Number.isFinite(s) && s > 0 ? s : 60) * 1000;
}

export const summary = 'run the rig worker (task queues rig, rig-host-<host> and rig-data-<host>) against the Temporal the CLI would reach (rig doctor)';

/** host:port for the Prometheus endpoint, checked before anything connects. */
function metricsAddress(given: string | undefined): string | undefined {
  const v = given ?? (process.env.RIG_METRICS_ADDRESS || undefined);
  if (v === undefined) return undefined;
  const m = /^(.+):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) throw new Error(`--metrics (or RIG_METRICS_ADDRESS) is '${v}': give host:port, e.g. 127.0.0.1:9464 (0.0.0.0:9464 for a scraper on another machine)`);
  return v;
}

const HELP = `usage: rig worker [--make-current] [--metrics HOST:PORT] [--task-queue Q ...]

Runs the rig's worker on task queues '${CONTROL_QUEUE}', '${hostQueue(hostName())}' and '${dataQueue(hostName())}' (default),
until Ctrl-C. A campaign's first step, taken from '${CONTROL_QUEUE}', claims the host of the worker that
took it; every step that acts on that machine (calibrate, clean-check, provision, teardown, report)
then goes to that host's own queue. The host name is RIG_HOST when set, else the one kept in the
state folder (state/host-id), written by the first worker started there from the machine's name: it
stays when the machine's name changes (a container restarted), so campaigns in flight are still served.
Connects the way the \`temporal\` CLI does: TEMPORAL_* variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_API_KEY, TEMPORAL_TLS_*) over the profile TEMPORAL_PROFILE names in temporal.toml
(TEMPORAL_CONFIG_FILE); default 127.0.0.1:7233, namespace default. \`rig doctor\` shows what it will use.

Polls as a version of the Worker Deployment '${deploymentName()}' (RIG_DEPLOYMENT): build id = package
version + commit (RIG_BUILD_ID, else RIG_GIT_COMMIT, else git, else the build-commit file npm ci
writes). A campaign stays on the build it started on (PINNED). The worker makes its build the current
one (where new campaigns start) when none is; --make-current makes it current even when another build
is, the last step of a deploy (docs/deploying.md). A worker whose build is no longer
current exits 0 once no open campaign is pinned to it (drained; asked every RIG_DRAIN_CHECK_SECONDS,
default 60). One worker per build and host: an old and a new build run side by side while the old one
drains. One machine per host: it refuses to start (exit 2) while the server lists another machine's
worker polling its host queues (a cloned image's host-id, a shared state folder, one RIG_HOST twice).

--metrics HOST:PORT (or RIG_METRICS_ADDRESS) serves the Temporal SDK's metrics (pollers, task
latencies, slots, sticky cache; prefix temporal_, tagged rig_build and rig_host) for Prometheus at
http://HOST:PORT/metrics. Off by default: two builds side by side on one host need two ports.`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: { 'task-queue': { type: 'string', multiple: true }, 'make-current': { type: 'boolean' }, metrics: { type: 'string' } },
  async run({ values }) {
    const loaded = loadConnection();
    const env = loaded.env;
    // Said at start: a worker that quietly dials the default while the CLI uses a profile is the mistake to catch.
    const addressFrom = describeConnection(loaded).find((l) => l.setting === 'address')?.from ?? 'default';
    const { host, from: hostFrom } = workerHostIdentity();
    const queues = values['task-queue'] ?? [CONTROL_QUEUE, hostQueue(host), dataQueue(host)];
    let build;
    let metrics;
    try {
      metrics = metricsAddress(values.metrics);
      build = await resolveBuildId();
    } catch (err) {
      console.error(`rig worker: ${(err as Error).message}`);
      return 2;
    }
    const version: DeploymentVersion = { deploymentName: deploymentName(), buildId: build.buildId };
    // What this process polls as, for what it starts: provision gives it to the AWS nodes' workers
    // (their package has no .git), which must poll as the build the campaign is pinned to.
    process.env.RIG_BUILD_ID = version.buildId;
    const claim = claimWorker({ host, address: env.address, namespace: env.namespace, queues, buildId: version.buildId });
    if ('running' in claim) {
      const r = claim.running;
      console.error(
        `rig worker: a rig worker of build ${r.buildId} (pid ${r.pid}, since ${r.startedAt}) already serves host ${host} on ${r.address} namespace ${r.namespace}; ` +
          'stop it first, or give this one another host name (RIG_HOST)',
      );
      return 2;
    }
    try {
      // Before anything makes the SDK's runtime: its telemetry is fixed when it is made.
      if (metrics) Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: metrics }, globalTags: { rig_build: version.buildId, rig_host: host } } } });
      // Who this worker is to the server: the SDK's `<pid>@<hostname>`, this boot and the host it serves
      // (lib/temporal/worker-identity.ts), so that another machine on the same host queues is told apart.
      const identity = rigWorkerIdentity({ pid: process.pid, osHost: os.hostname(), bootId: bootId(), host });
      const refusal = await refuseIfAnotherMachinePolls(env, host, queues, identity);
      if (refusal) {
        console.error(`rig worker: ${refusal}`);
        return 2;
      }
      const { connection, workers } = await createRigWorkers({ env, host, taskQueues: queues, version, workerOptions: { shutdownGraceTime: SHUTDOWN_GRACE, identity } });
      console.log(
        `rig worker on ${env.address} (from ${addressFrom}; rig doctor shows every setting) namespace ${env.namespace}, host ${host} (from ${hostFrom}), ` +
          `deployment ${version.deploymentName} build ${version.buildId} (from ${build.from}), task queues: ${workers.map((w) => w.options.taskQueue).join(', ')}` +
          (metrics ? `, metrics on http://${metrics}/metrics` : ''),
      );
      const log = (line: string) => console.log(`rig worker: ${line}`);
      let stopWatch = () => {};
      try {
        const running = Promise.all(workers.map((w) => w.run()));
        const policy = { connection, namespace: env.namespace, version, makeCurrent: values['make-current'] === true, identity, log };
        // Once its pollers are registered (the server refuses to make a version it has not seen current).
        const current = takeCurrentVersion(policy).catch((err: Error) => log(`${err.message}; it serves only campaigns pinned to its build`));
        stopWatch = whenDrained(policy, drainCheckMs(), () => {
          log(`build ${version.buildId} is drained (not current, no open campaign pinned to it): stopping`);
          workers.forEach((w) => w.shutdown());
        });
        await Promise.all([running, current]);
      } finally {
        stopWatch();
        await connection.close();
      }
    } finally {
      claim.release();
    }
    return 0;
  },
});

/** gRPC status PERMISSION_DENIED. */
const PERMISSION_DENIED = 7;

/**
 * One machine per host queue: the refusal when another machine's worker polls this host's queues
 * (the server's poller list; lib/temporal/host-queue-owner.ts), else undefined.
 */
async function refuseIfAnotherMachinePolls(env: Parameters<typeof connectNative>[0], host: string, queues: string[], identity: string): Promise<string | undefined> {
  const own = queues.filter((q) => hostOfQueue(q) !== undefined);
  if (own.length === 0) return undefined;
  const connection = await connectNative(env);
  try {
    const others = await otherMachinesPolling({
      service: connection.workflowService,
      namespace: env.namespace,
      queues: own,
      me: machineOf(identity)!,
      livePollMs: pollerLiveMs(),
      log: (line) => console.log(`rig worker: ${line}`),
    });
    return others.length ? otherMachineRefusal(host, identity, others) : undefined;
  } catch (err) {
    // A role that may not describe task queues: the worker still serves, and says what it could not check.
    if ((err as { code?: number }).code !== PERMISSION_DENIED) throw err;
    console.log(`rig worker: could not ask the server which machines poll ${own.join(', ')} (${(err as Error).message}): not checked`);
    return undefined;
  } finally {
    await connection.close();
  }
}
