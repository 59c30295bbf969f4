// Before a build becomes current: every host's queue that the current build has polled must have a
// poller of the new build. Once it is current, the AUTO_UPGRADE executions (a kept rig's watchdog, a
// host's lease) send their activities to the new build's workers: a host queue without one leaves a
// watchdog's teardown waiting there for ever.
//
// The server's own check (SetWorkerDeploymentCurrentVersion without ignore_missing_task_queues) compares
// the task queues the two versions have polled, but passes over a missing queue with no backlog and no
// add rate (temporal service/worker/workerdeployment/client.go, IsVersionMissingTaskQueues and
// isTaskQueueExpectedInNewVersion): an idle `rig-host-X`, the usual state of a host between campaigns,
// passes. This check has no such exemption: it takes every queue the current version has ever been
// polled on (DescribeWorkerDeploymentVersion's versionTaskQueues), keeps the rig's own (`rig`, each
// host's `rig-host-`/`rig-data-`; an AWS campaign's node queues belong to that campaign and its build),
// and asks the server's poller list (DescribeTaskQueue) for a poller of the new build on each.
import type { temporal } from '@temporalio/proto';
import { CONTROL_QUEUE, hostOfQueue } from './queues';
import { makeCurrent, routing, type DeploymentVersion } from './deployment';

type Service = Pick<temporal.api.workflowservice.v1.WorkflowService, 'describeWorkerDeployment' | 'describeWorkerDeploymentVersion' | 'describeTaskQueue' | 'setWorkerDeploymentCurrentVersion'>;

/** temporal.api.enums.v1.TaskQueueType */
const TYPE_NAME: Record<number, string> = { 1: 'workflow', 2: 'activity', 3: 'nexus' };

export interface UncoveredQueue {
  queue: string;
  type: string;
  /** Build ids that poll it now (the old build, still serving its pinned campaigns, most often). */
  polledBy: string[];
}

export interface CoverageCheck {
  /** The build that is current now (undefined: none, nothing to cover). */
  current?: string;
  /** The rig's queues the current build has polled, each `name (type)`. */
  checked: string[];
  uncovered: UncoveredQueue[];
}

/** Which of the current build's queues have no poller of `next` (see the file's head). */
export async function uncoveredQueues(service: Service, namespace: string, next: DeploymentVersion): Promise<CoverageCheck> {
  const { current } = await routing(service, namespace, next.deploymentName);
  if (!current || current === next.buildId) return { current, checked: [], uncovered: [] };
  const res = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName: next.deploymentName, buildId: current } });
  const queues = (res.versionTaskQueues ?? [])
    .map((q) => ({ name: q.name ?? '', type: Number(q.type ?? 0) }))
    .filter((q) => q.name === CONTROL_QUEUE || hostOfQueue(q.name) !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name) || a.type - b.type);
  const uncovered: UncoveredQueue[] = [];
  for (const q of queues) {
    const d = await service.describeTaskQueue({ namespace, taskQueue: { name: q.name }, taskQueueType: q.type });
    const builds = (d.pollers ?? []).filter((p) => p.deploymentOptions?.deploymentName === next.deploymentName).map((p) => p.deploymentOptions?.buildId ?? '');
    if (!builds.includes(next.buildId)) uncovered.push({ queue: q.name, type: TYPE_NAME[q.type] ?? String(q.type), polledBy: [...new Set(builds)].sort() });
  }
  return { current, checked: queues.map((q) => `${q.name} (${TYPE_NAME[q.type] ?? q.type})`), uncovered };
}

/** The refusal: each queue, and what to do about it. */
export function uncoveredRefusal(next: DeploymentVersion, check: CoverageCheck): string {
  const lines = check.uncovered.map((u) => `  ${u.queue} (${u.type} tasks): no poller of build ${next.buildId}${u.polledBy.length ? `; polled by ${u.polledBy.join(', ')}` : ''}`);
  return [
    `build ${next.buildId} is not made current: ${check.uncovered.length} of the ${check.checked.length} queues build ${check.current} has polled have no worker of it,`,
    ...lines,
    `Start build ${next.buildId}'s worker on each host named (rig-host-<host>), then make it current again. A host that is gone for good: ` +
      `temporal worker deployment set-current-version --deployment-name ${next.deploymentName} --build-id '${next.buildId}' --ignore-missing-task-queues ` +
      '(its kept rigs, if any, are then torn down by hand: rig step teardown).',
  ].join('\n');
}

export class UncoveredQueuesError extends Error {}

/**
 * Makes `next` current once every queue of the current build has a poller of it (asking again for up
 * to `withinMs`: a worker that has just started registers its polls within seconds), else throws an
 * UncoveredQueuesError with the refusal. Returns the build that was current before.
 */
export async function makeCurrentChecked(
  service: Service,
  namespace: string,
  next: DeploymentVersion,
  identity: string,
  withinMs = 60_000,
  everyMs = 1_000,
): Promise<string | undefined> {
  const until = Date.now() + withinMs;
  for (;;) {
    const check = await uncoveredQueues(service, namespace, next);
    if (check.uncovered.length === 0) return makeCurrent(service, namespace, next, identity, Math.max(until - Date.now(), 5_000));
    if (Date.now() > until) throw new UncoveredQueuesError(uncoveredRefusal(next, check));
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
