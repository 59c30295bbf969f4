// Every activity the rig's workers run, typed for workflows through proxyActivities<typeof activities>.
// Any host (queue `rig`): resolveSpec, claimHost, requestLease,
// campaignRunState (the watchdog's and the lease's). One host's machine-bound steps
// (queue `rig-host-<host>`, named by claimHost): openCampaign, calibrateInstrument, cleanCheck,
// provisionRig, teardownRig, retagRigExpiry (the watchdog's, when its deadline moves), nodeConsoleTail
// (an AWS rig's nodes' consoles, when no worker on them took a step), awaitRigDatabase (an AWS rig's
// RDS instance, waited for apart from provisioning),
// finishCampaign, startLoadNodes (a local rig's load nodes' workers, issue 37). Data plane (queue `rig-data-<host>`, named by provision): bringUp, seedHistory,
// calibrateDatabase, warmUp, runRepeat, runDenominator, judgeNodeRepeat (a repeat of N load nodes: runNodeLoad on each node's queue); on an AWS rig prepareRig too, and startRigService and
// keepAppNodeEvidence (after each repeat) on its app node's queue; applyVariant (a local rig's
// variants) on the data-plane queue. lib/temporal/queues.ts names them.
// These are the functions bound to the real targets (in-process callers: `rig step`); workers register
// createActivities(deps) from ./factory.ts, which is checked to have exactly these names and types.
export { claimHost } from './host';
export { requestLease } from './lease';
export { resolveSpec } from './resolve-spec';
export { openCampaign } from './campaign-open';
export { calibrateInstrument } from './calibrate';
export { cleanCheck, provisionRig, awaitRigDatabase, teardownRig, retagRigExpiry, nodeConsoleTail } from './rig-lifecycle';
export { campaignRunState } from './campaign-state';
export { prepareRig, startRigService, keepAppNodeEvidence } from './nodes';
export { bringUp } from './bringup';
export { calibrateDatabase } from './db-calibrate';
export { seedHistory } from './seed';
export { warmUp } from './warmup';
export { runRepeat } from './repeat';
export { runNodeLoad, judgeNodeRepeat } from './node-repeat';
export { startLoadNodes } from './load-nodes';
export { runDenominator } from './denominator';
export { applyVariant } from './variant';
export { finishCampaign } from './finish';
