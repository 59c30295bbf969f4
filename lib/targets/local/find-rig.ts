// Which local rig a command means: the one named, or the only provisioned one.
import fs from 'node:fs';
import { readRigRecord } from './rig-record';
import { rigsDir } from './rig-paths';

export function resolveCampaign(campaignId: string | undefined): string {
  if (campaignId) return campaignId;
  const dir = rigsDir();
  const complete = fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => readRigRecord(name)?.complete) : [];
  if (complete.length === 1) return complete[0];
  if (complete.length === 0) throw new Error(`no provisioned local rig under ${dir}: provision one first, or pass --campaign`);
  throw new Error(`several local rigs (${complete.join(', ')}): pass --campaign ID`);
}
