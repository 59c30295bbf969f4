// Before a local campaign starts (rig rehearse, rig campaign start with target local): what this
// machine would refuse later, said now, in a second, before any step runs. Where PostgreSQL's OS user
// can keep the cluster (lib/targets/local/pg-data-root.ts), and whether the seed fits the free disk
// there. The worker that claims the campaign checks the place again when it provisions.
import path from 'node:path';
import { seedDiskProblem } from '../lib/protocol/plan';
import { localFreeBytes } from './spec-input';
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
