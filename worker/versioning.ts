// What a versioned rig worker does about its own Worker Deployment version once it polls:
//  - it becomes the current version when the deployment has none (the first deploy, a fresh dev
//    server), or when asked (`rig worker --make-current`, the last step of a deploy, after `rig
//    replay` passed); otherwise it says which build is current and how to switch, and serves only the
//    campaigns pinned to its own build (none, for a new build nobody made current);
//  - once it is no longer current and the server reports it DRAINED (no open campaign pinned to it),
//    it stops: an old build's worker exits by itself when its last campaign has finished.
import type { NativeConnection } from '@temporalio/worker';
import { drainage, routing, type DeploymentVersion } from '../lib/temporal/deployment';
import { makeCurrentChecked } from '../lib/temporal/set-current-check';

export interface VersionPolicy {
  connection: NativeConnection;
  namespace: string;
  version: DeploymentVersion;
  /** Make this build current even when another one is (`--make-current`). */
  makeCurrent: boolean;
  identity: string;
  log: (line: string) => void;
}

/** The CLI command that does what `--make-current` does, for the operator who deploys by hand. */
export function setCurrentCommand(version: DeploymentVersion): string {
  return `temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id '${version.buildId}'`;
}

/** Applies the policy above; resolves with whether this build is current. Call once the workers poll. */
export async function takeCurrentVersion(p: VersionPolicy): Promise<boolean> {
  const { current } = await routing(p.connection.workflowService, p.namespace, p.version.deploymentName);
  if (current === p.version.buildId) {
    p.log(`build ${p.version.buildId} is the current version of deployment ${p.version.deploymentName}`);
    return true;
  }
  if (current && !p.makeCurrent) {
    p.log(
      `build ${current} is the current version of deployment ${p.version.deploymentName}: new campaigns start there. ` +
        `This worker (build ${p.version.buildId}) serves only campaigns pinned to its build until it is made current ` +
        `(after \`rig replay\` passes): rig worker --make-current, or ${setCurrentCommand(p.version)}`,
    );
    return false;
  }
  // Checked first: every host queue the current build polls must have a poller of this one (set-current-check.ts).
  const previous = await makeCurrentChecked(p.connection.workflowService, p.namespace, p.version, p.identity);
  p.log(`build ${p.version.buildId} is now the current version of deployment ${p.version.deploymentName}${previous ? ` (was ${previous}, which drains: its campaigns finish on it)` : ''}`);
  return true;
}

/**
 * Calls `onDrained` once this version is DRAINED (not current, not ramping, no open pinned workflow on
 * it), asking every `everyMs`. Returns a function that stops asking. A failed ask (server away) is
 * asked again next time: a worker never exits on a guess.
 */
export function whenDrained(p: Pick<VersionPolicy, 'connection' | 'namespace' | 'version'>, everyMs: number, onDrained: () => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    if (stopped) return;
    try {
      if ((await drainage(p.connection.workflowService, p.namespace, p.version)) === 'drained') {
        stopped = true;
        onDrained();
        return;
      }
    } catch {
      // asked again below
    }
    if (!stopped) timer = setTimeout(check, everyMs);
  };
  timer = setTimeout(check, everyMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
