// Every activity the rig's workers run, typed for workflows through proxyActivities<typeof activities>.
// Control plane (queue `rig`): openCampaign, calibrateInstrument, cleanCheck, provisionRig, teardownRig,
// campaignRunState (the watchdog's), finishCampaign. Data plane (queue `rig-data-<host>`): bringUp, seedHistory, warmUp, runRepeat, runDenominator.
export { openCampaign } from './campaign-open';
export { calibrateInstrument } from './calibrate';
export { cleanCheck, provisionRig, teardownRig } from './rig-lifecycle';
export { campaignRunState } from './campaign-state';
export { bringUp } from './bringup';
export { seedHistory } from './seed';
export { warmUp } from './warmup';
export { runRepeat } from './repeat';
export { runDenominator } from './denominator';
export { finishCampaign } from './finish';
