// Before a local campaign starts (rig rehearse, rig campaign start with target local): what this
// machine would refuse later, said now, in a second, before any step runs. Where PostgreSQL's OS user
// can keep the cluster (lib/targets/local/pg-data-root.ts), and whether the seed fits the free disk
// there. The worker that claims the campaign checks the place again when it provisions.
import fs from 'node:fs';
import path from 'node:path';
import { seedDiskProblem } from '../lib/protocol/plan';
import type { CampaignSpec } from '../lib/protocol/spec';
import { pgOsUser } from '../lib/targets/local/pg-binaries';
import { clusterPlace } from '../lib/targets/local/pg-data-root';
import { rigsDir } from '../lib/targets/local/rig-paths';

/** Free bytes of the file system holding `dir` (its nearest existing ancestor). */
function freeBytesAt(dir: string): number {
  let at = path.resolve(dir);
  while (!fs.existsSync(at)) at = path.dirname(at);
  const s = fs.statfsSync(at);
  return s.bavail * s.bsize;
}

/** The refusals, each naming the folder or field and the fix; [] when the machine can run it. */
export function localMachineProblems(spec: CampaignSpec, campaignId: string): string[] {
  if (spec.target !== 'local') return [];
  let place;
  try {
    place = clusterPlace(campaignId, path.join(rigsDir(), campaignId), pgOsUser());
  } catch (err) {
    return [(err as Error).message];
  }
  const where = place.root ?? rigsDir();
  const disk = seedDiskProblem(spec, { bytes: freeBytesAt(where), where });
  return disk ? [`${disk.path.join('.')}: ${disk.message}`] : [];
}
