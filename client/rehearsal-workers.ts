// The workers `rig rehearse` campaigns on: the rig worker already serving this host when one runs, of
// whatever build (a second one of its build beside it would take half of the campaign's steps; one of
// another build would not be where the campaign starts), else the rig's workers in this process, until
// the rehearsal ends. Those poll as this tree's build and make it current when no build is, and also
// on the dev server `rig dev up` runs on this machine (`ownsServer`): every commit is a new build, and
// a rehearsal after a `git pull` would otherwise start its campaign on the older build that is still
// current there, which no worker serves any more, and wait for ever. Elsewhere (a shared or production
// server) making a build current stays a deploy's decision (`rig worker --make-current`).
// Campaigns pinned to the older build stay on it (a new current version changes where new ones start).
// When this tree's build is not current and no worker of it was reused (`current: false`), a campaign
// started now would wait for ever on a build nobody serves here: rehearse refuses instead (notCurrentRefusal).
import { CONTROL_QUEUE, createRigWorkers, dataQueue, hostQueue } from '../worker/run-worker';
import type { TemporalEnv } from '../lib/temporal/connection-env';
import { deploymentName } from '../lib/temporal/deployment';
import { resolveBuildId } from '../lib/tools/build-id';
import { claimWorker, runningWorkers, type WorkerRecord } from '../lib/tools/worker-lock';
import { takeCurrentVersion } from '../worker/versioning';

export type RehearsalWorkers = { reused: WorkerRecord; stop(): Promise<void> } | { reused?: undefined; current: boolean; stop(): Promise<void> };

export async function rehearsalWorkers(env: TemporalEnv, host: string, ownsServer = false): Promise<RehearsalWorkers> {
  const live = runningWorkers(host, env.address, env.namespace);
  if (live.length > 0) return { reused: live[live.length - 1], stop: async () => undefined };
  const version = { deploymentName: deploymentName(), buildId: (await resolveBuildId()).buildId };
  const claim = claimWorker({ host, address: env.address, namespace: env.namespace, queues: [CONTROL_QUEUE, hostQueue(host), dataQueue(host)], buildId: version.buildId });
  if ('running' in claim) return { reused: claim.running, stop: async () => undefined };
  let stop: (() => Promise<void>) | undefined;
  try {
    const { connection, workers } = await createRigWorkers({ env, host, version });
    const running = Promise.all(workers.map((w) => w.run()));
    stop = async () => {
      workers.forEach((w) => w.shutdown());
      await running.catch(() => undefined);
      await connection.close();
      claim.release();
    };
    const current = await takeCurrentVersion({ connection, namespace: env.namespace, version, makeCurrent: ownsServer, identity: `rig rehearse ${host} pid ${process.pid}`, log: (l) => console.error(`rig rehearse: ${l}`) });
    return { current, stop };
  } catch (err) {
    if (stop) await stop();
    else claim.release();
    throw err;
  }
}

/**
 * Why a rehearsal whose workers' build is not current stops before it starts a campaign: the campaign
 * would start on the current build, which no worker on this machine serves, and wait for ever. The
 * fix is named: make this build current (a deploy's decision on a server that is not this tree's own).
 */
export function notCurrentRefusal(address: string): string {
  return (
    `rig rehearse: not started: this tree's build is not the current version on the Temporal server at ${address} ` +
    '(a server this checkout did not start, e.g. another clone\'s `rig dev up`), and no worker of the current build runs on this machine, ' +
    'so the campaign would wait for ever. Make this build current from this tree: `npx rig deploy set-current` ' +
    '(or stop the other checkout\'s server with `npx rig dev down` there), then run rig rehearse again'
  );
}
