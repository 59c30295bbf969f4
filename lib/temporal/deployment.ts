// The rig's Worker Deployment (Temporal Worker Versioning): every worker polls as one version of the
// deployment `rig` (RIG_DEPLOYMENT), its build id from lib/tools/build-id.ts. New campaigns start on
// the deployment's current version and stay PINNED to it; the watchdog and the host lease move to
// each new current version (AUTO_UPGRADE, their patches kept). These are the server calls the worker
// makes about its own version: which version is current, make one current, and whether an old one
// has drained (no open pinned workflow left on it).
import type { temporal } from '@temporalio/proto';

/** The deployment every rig worker belongs to (RIG_DEPLOYMENT: two rigs, one namespace). */
export function deploymentName(env: NodeJS.ProcessEnv = process.env): string {
  return env.RIG_DEPLOYMENT?.trim() || 'rig';
}

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/** The slice of the WorkflowService these calls need (a Client's or a NativeConnection's). */
type Service = Pick<temporal.api.workflowservice.v1.WorkflowService, 'describeWorkerDeployment' | 'setWorkerDeploymentCurrentVersion' | 'describeWorkerDeploymentVersion'>;

export interface Routing {
  /** The build id new workflows start on; undefined: none (new workflows go to unversioned workers). */
  current?: string;
  ramping?: string;
}

/** gRPC status codes (the numbers every gRPC library shares). */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;

function code(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/** Which builds of the deployment take new workflows; a deployment no worker has polled yet has none. */
export async function routing(service: Service, namespace: string, name: string): Promise<Routing> {
  try {
    const res = await service.describeWorkerDeployment({ namespace, deploymentName: name });
    const rc = res.workerDeploymentInfo?.routingConfig;
    return { current: rc?.currentDeploymentVersion?.buildId || undefined, ramping: rc?.rampingDeploymentVersion?.buildId || undefined };
  } catch (err) {
    if (code(err) === NOT_FOUND) return {};
    throw err;
  }
}

/**
 * Makes `version` the deployment's current version. The server refuses a version it has seen no
 * poller of yet (a worker's first poll registers it), so this asks again for up to `withinMs`.
 * Returns the build id that was current before.
 */
export async function makeCurrent(service: Service, namespace: string, version: DeploymentVersion, identity: string, withinMs = 60_000): Promise<string | undefined> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      const res = await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName: version.deploymentName, buildId: version.buildId, identity });
      return res.previousDeploymentVersion?.buildId || undefined;
    } catch (err) {
      // NOT_FOUND / FAILED_PRECONDITION: the version or its pollers are not registered yet.
      const retry = code(err) === NOT_FOUND || code(err) === FAILED_PRECONDITION;
      if (!retry || Date.now() > until) throw new Error(`could not make build ${version.buildId} current in deployment ${version.deploymentName}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export type Drainage = 'not-draining' | 'draining' | 'drained';

/**
 * Whether a version still serves open pinned workflows. The server sets DRAINING when a version
 * stops being current or ramping and DRAINED once visibility shows no open pinned workflow on it
 * (checked every matching.wv.VersionDrainageStatusRefreshInterval, after a grace period of
 * matching.wv.VersionDrainageStatusVisibilityGracePeriod; 3 minutes each by default).
 * A version that is current, ramping, or was never either is `not-draining`.
 */
export async function drainage(service: Service, namespace: string, version: DeploymentVersion): Promise<Drainage> {
  const res = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName: version.deploymentName, buildId: version.buildId } });
  const s = res.workerDeploymentVersionInfo?.drainageInfo?.status;
  // VersionDrainageStatus: 1 DRAINING, 2 DRAINED (temporal/api/enums/v1/deployment.proto).
  return s === 2 ? 'drained' : s === 1 ? 'draining' : 'not-draining';
}
