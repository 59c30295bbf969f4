// Every workflow the rig's workers run. Temporal bundles this file (and what it imports) into the
// deterministic workflow sandbox: no Node built-ins, no I/O, no clocks outside @temporalio/workflow.
//
// Versioning behaviour of each type (Worker Deployments, lib/temporal/deployment.ts), for workers
// that poll as a deployment version: a campaign is PINNED, so a series finishes on the build it
// started on however many deploys happen meanwhile; the watchdog and the host lease live for days
// and must move to each new build: AUTO_UPGRADE, the versioned worker's default (worker/run-worker.ts),
// so they keep their patches.
//
// Declared only where a versioned worker runs the campaign: the server refuses a workflow task
// completion that names a behaviour from a worker without deployment options ("versioning behavior
// cannot be specified without deployment options being set with versioned mode"), which the tests'
// in-process workers are. The getter runs once per run a worker holds, when it starts it (or replays
// it); currentDeploymentVersion is the version of the worker that completed the task being applied,
// from the history on a replay (an unversioned worker reports a build id, its bundle's checksum, but
// no deployment name), so a campaign's first task decides: a campaign started by a versioned
// worker is PINNED wherever it is replayed; one started before workers were versioned stays unpinned
// (moves to each current build, as it did), and runs on a build whose campaign patches are deprecated
// only if it took none of their old branches (`rig replay --open` names one that did).
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { benchCampaign } from './campaign';
import { rigWatchdog } from './watchdog';
import { hostLease } from './host-lease';

setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {}), benchCampaign);

export { benchCampaign, rigWatchdog, hostLease };
