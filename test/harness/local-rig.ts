// Tests of the local target run in a state folder of their own (RIG_STATE_DIR), so that their ledgers
// never mix with a developer's rigs. When the file ends, also after a failure, every campaign its
// ledgers still list is torn down and the folder removed; the machine-wide marker scan of `rig check`
// then finds nothing of the test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { ledgerCampaigns } from '../../lib/targets/local/ledger';
import { teardownLocal } from '../../lib/targets/local/teardown';

/** Point RIG_STATE_DIR at a fresh folder for this test file; returns it. */
export function isolatedStateDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-state-'));
  fs.chmodSync(dir, 0o755); // the DB's OS user must traverse it
  const previous = process.env.RIG_STATE_DIR;
  process.env.RIG_STATE_DIR = dir;
  after(async () => {
    process.env.RIG_STATE_DIR = dir;
    try {
      for (const campaign of ledgerCampaigns()) await teardownLocal(campaign);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      if (previous === undefined) delete process.env.RIG_STATE_DIR;
      else process.env.RIG_STATE_DIR = previous;
    }
  });
  return dir;
}

/** A campaign id unique to this run. */
export function testCampaign(name: string): string {
  return `t-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
