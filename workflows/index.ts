// Every workflow the rig's workers run. Temporal bundles this file (and what it imports) into the
// deterministic workflow sandbox: no Node built-ins, no I/O, no clocks outside @temporalio/workflow.
//
// Versioning behaviour of each type (Worker Deployments, lib/temporal/deployment.ts), for workers
// that poll as a deployment version: a campaign is PINNED, so a series finishes on the build it
// started on however many deploys happen meanwhile; the watchdog and the host lease live for days
// and must move to each new build (AUTO_UPGRADE, the worker's default), so they keep their patches.
import { setWorkflowOptions } from '@temporalio/workflow';
import { benchCampaign } from './campaign';
import { rigWatchdog } from './watchdog';
import { hostLease } from './host-lease';

setWorkflowOptions({ versioningBehavior: 'PINNED' }, benchCampaign);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, rigWatchdog);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, hostLease);

export { benchCampaign, rigWatchdog, hostLease };
