// The fixtures' API key on an existing deployment: bring-up mints it in the deployment's database (as
// for every target) and the rig keeps the raw key in a 0600 file beside the record, for the load
// generator. Nothing else of the deployment is a secret the rig holds.
import fs from 'node:fs';
import type { ApiKeyStore } from '../target';
import { existingPaths } from './paths';

export const existingApiKeys: ApiKeyStore = {
  async store(campaignId, apiKey) {
    const p = existingPaths(campaignId);
    fs.mkdirSync(p.dir, { recursive: true, mode: 0o700 });
    const tmp = `${p.secretsFile}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify({ apiKey }) + '\n', { mode: 0o600 });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, p.secretsFile);
  },
  async read(campaignId) {
    const file = existingPaths(campaignId).secretsFile;
    if (!fs.existsSync(file)) return undefined;
    const mode = fs.statSync(file).mode & 0o777;
    if (mode & 0o077) throw new Error(`${file} has mode ${mode.toString(8)}: secrets must be 0600 (chmod 600 it)`);
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { apiKey?: string }).apiKey;
  },
};
