// Where the rig keeps its own files about an existing deployment: <state>/existing/<campaign>/, on the
// host that connected (its data-plane worker reads them). Nothing of the deployment lives here: only
// the record of how to reach it (record.json, no secret), the fixtures' API key the rig minted
// (secrets.json, 0600) and the fixtures' customer list. Apart from local rigs' folders, so the local
// clean check never mistakes them for a rig.
import path from 'node:path';
import { stateDir } from '../../tools/paths';
import { assertCampaignId } from '../local/rig-paths';

export interface ExistingPaths {
  dir: string;
  /** How to reach the deployment (service URL, where the URLs are read, database host:port/name): no secret. */
  recordFile: string;
  /** The fixtures' raw API key, mode 0600. */
  secretsFile: string;
}

export function existingPaths(campaignId: string): ExistingPaths {
  assertCampaignId(campaignId);
  const dir = path.join(stateDir(), 'existing', campaignId);
  return { dir, recordFile: path.join(dir, 'record.json'), secretsFile: path.join(dir, 'secrets.json') };
}
