// What teardown and the clean check are on a deployment the rig did not make: nothing. The workflow
// skips both for target "existing" (and the watchdog, which would tear down); these answer the
// callers that still ask (`rig step teardown`, `rig check --target existing`) without touching it.
// The rig's own rows (tenant rig-bench, tagged rig_seed / rig_run) stay in the database: removing
// them is the deployment owner's call, not the rig's.
import type { CleanCheckResult, TeardownResult } from '../target';

export const NOTHING_TORN_DOWN = 'nothing torn down: target "existing" is a deployment the rig did not make (its service and database are left running as they were)';

export async function teardownExisting(campaignId: string): Promise<TeardownResult> {
  return { campaignId, removed: [], alreadyGone: [], keptLogs: [NOTHING_TORN_DOWN] };
}

export async function cleanCheckExisting(): Promise<CleanCheckResult> {
  return { status: 'could-not-look', reason: 'target "existing": the rig makes nothing there, so it has nothing of its own to look for', leftovers: [] };
}
