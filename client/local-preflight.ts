// Before a local campaign starts (rig rehearse, rig campaign start with target local): what this
// machine would refuse later, said now, in a second, before any step runs. Where PostgreSQL's OS user
// can keep the cluster (lib/targets/local/pg-data-root.ts), and whether the seed fits the free disk
// there. The worker that claims the campaign checks the place again when it provisions.
import path from 'node:path';
import { seedDiskProblem } from '../lib/protocol/plan';
import { hostName } from '../lib/tools/host-name';
import { localFreeBytes, SpecInputError } from './spec-input';
import type { CampaignSpec } from '../lib/protocol/spec';
import { pgOsUser } from '../lib/targets/local/pg-binaries';
import { clusterPlace } from '../lib/targets/local/pg-data-root';
import { rigsDir } from '../lib/targets/local/rig-paths';

/** The refusals, each naming the folder or field and the fix; [] when the machine can run it. */
export function localMachineProblems(spec: CampaignSpec, campaignId: string): string[] {
  if (spec.target !== 'local') return [];
  let place;
  try {
    place = clusterPlace(campaignId, path.join(rigsDir(), campaignId), pgOsUser());
  } catch (err) {
    return [(err as Error).message];
  }
  const disk = seedDiskProblem(spec, localFreeBytes(place.root ?? rigsDir()));
  return disk ? [`${disk.path.join('.')}: ${disk.message}`] : [];
}

/**
 * Refuses (exit 2, client/main.ts) a local campaign this machine cannot run, before it is started:
 * rig rehearse and rig campaign start alike. A spec pinned to another host (its "host") is that
 * host's worker's to check when it provisions: this machine's folders say nothing about it.
 */
export function assertLocalMachineCanRun(spec: CampaignSpec, campaignId: string): void {
  if (spec.host !== undefined && spec.host !== hostName()) return;
  const problems = localMachineProblems(spec, campaignId);
  if (problems.length) throw new SpecInputError(`this machine cannot run ${spec.name} (nothing was started):\n${problems.map((m) => `  - ${m}`).join('\n')}`);
}
