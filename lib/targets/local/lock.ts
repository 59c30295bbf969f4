// One provision or teardown per campaign at a time. An activity retried while its first attempt still
// runs (heartbeat timeout) must not make a second cluster. The lock is a file made with O_EXCL holding
// the owner's pid; a lock whose pid is dead is stale and taken over.
import fs from 'node:fs';
import path from 'node:path';
import { isAlive, sleep } from './proc';
import { rigPaths } from './rig-paths';

export async function withCampaignLock<T>(campaignId: string, fn: () => Promise<T>, waitMs = 120_000): Promise<T> {
  const file = rigPaths(campaignId).lockFile;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(file, 'utf8').trim());
      if (!holder || !isAlive(holder)) {
        fs.rmSync(file, { force: true }); // stale: its holder is gone
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`campaign ${campaignId} is locked by pid ${holder} (${file}); wait for it or remove the file if that pid is not a rig`);
      }
      await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
