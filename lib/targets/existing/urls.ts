// The deployment's database URLs WITH passwords, read from where the spec said (a variable of this
// worker, or a file on this host) at the moment of use: never stored by the rig, never returned from
// an activity. The rig has no superuser here: the DB sampler reads as the owner (it sees other roles'
// wait events only when the owner has pg_read_all_stats).
import { readSecret } from '../secret-source';
import type { RigDbUrls } from '../target';
import { connectedRecord } from './record';

export function existingDbUrls(campaignId: string): RigDbUrls {
  const rec = connectedRecord(campaignId);
  const ownerUrl = readSecret('existing.databaseUrlFrom', rec.databaseUrlFrom);
  // Without an app URL (the spec has no denominator, which refuses otherwise) nothing connects as the app role.
  const appUrl = rec.appDatabaseUrlFrom ? readSecret('existing.appDatabaseUrlFrom', rec.appDatabaseUrlFrom) : '';
  return { superuserUrl: ownerUrl, ownerUrl, appUrl };
}
