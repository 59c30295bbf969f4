// createActivities(deps): every activity the rig's workers run, built from what they are given (the
// targets) instead of what they import: the shape of Temporal's activities-dependency-injection sample.
// The worker registers what this returns (worker/run-worker.ts); workflows keep proxying
// `typeof activities` (activities/index.ts, the same functions bound to the real targets), and the
// check at the bottom keeps the two lists identical, name for name and type for type.
import { calibrateInstrument } from './calibrate';
import { openCampaign } from './campaign-open';
import { campaignRunState } from './campaign-state';
import { bringUpActivities } from './bringup';
import { nodeActivities } from './nodes';
import { nodeRepeatActivities } from './node-repeat';
import { loadNodeActivities } from './load-nodes';
import type { ActivityDeps } from './deps';
import { dbCalibrationActivities } from './db-calibrate';
import { denominatorActivities } from './denominator';
import { finishActivities } from './finish';
import { claimHost } from './host';
import { requestLease } from './lease';
import { repeatActivities } from './repeat';
import { resolveSpec } from './resolve-spec';
import { rigLifecycleActivities } from './rig-lifecycle';
import { seedActivities } from './seed';
import { withShipping } from './ship';
import { variantActivities } from './variant';
import { warmUpActivities } from './warmup';
import type * as boundActivities from './index';

export function createActivities(deps: ActivityDeps) {
  const { cleanCheck, provisionRig, awaitRigDatabase, teardownRig, retagRigExpiry, nodeConsoleTail } = rigLifecycleActivities(deps);
  // Steps that may run on a rig's own node ship what they wrote before they report done (./ship.ts).
  const onNode = { ...nodeActivities(deps), ...bringUpActivities(deps), ...seedActivities(deps), ...warmUpActivities(deps), ...repeatActivities(deps), ...nodeRepeatActivities(deps), ...denominatorActivities(deps), ...dbCalibrationActivities(deps) };
  return {
    claimHost,
    requestLease,
    resolveSpec,
    openCampaign,
    calibrateInstrument: withShipping(deps, calibrateInstrument),
    cleanCheck,
    provisionRig,
    awaitRigDatabase,
    teardownRig,
    retagRigExpiry,
    nodeConsoleTail,
    campaignRunState,
    prepareRig: withShipping(deps, onNode.prepareRig),
    startRigService: withShipping(deps, onNode.startRigService),
    keepAppNodeEvidence: withShipping(deps, onNode.keepAppNodeEvidence),
    bringUp: withShipping(deps, onNode.bringUp),
    calibrateDatabase: withShipping(deps, onNode.calibrateDatabase),
    seedHistory: withShipping(deps, onNode.seedHistory),
    warmUp: withShipping(deps, onNode.warmUp),
    runRepeat: withShipping(deps, onNode.runRepeat),
    runNodeLoad: withShipping(deps, onNode.runNodeLoad),
    judgeNodeRepeat: withShipping(deps, onNode.judgeNodeRepeat),
    runDenominator: withShipping(deps, onNode.runDenominator),
    ...loadNodeActivities(deps),
    ...variantActivities(deps),
    ...finishActivities(deps),
  };
}

export type RigActivities = ReturnType<typeof createActivities>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Fails to compile when activities/index.ts (what workflows see) and this factory (what workers run) differ.
const sameActivities: Same<RigActivities, typeof boundActivities> = true;
void sameActivities;
