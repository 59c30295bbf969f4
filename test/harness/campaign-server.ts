// A private Temporal dev server (started by `rig dev up`'s own code, so it can be restarted on the
// same database) with the rig's state and results in a fresh temporary folder. Shared by the
// end-to-end tests (test/harness/campaign.ts) and bench:campaign.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { devDown, devUp, type DevServerOptions } from '../../client/dev-server';
import { freePort } from '../../lib/tools/free-port';

export interface CampaignServer {
  dir: string;
  dev: DevServerOptions;
  address: string;
  client: Client;
  close(): Promise<void>;
}

export async function startCampaignServer(prefix = 'rig-e2e-'): Promise<CampaignServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  // Activities in this process read these at call time.
  process.env.RIG_STATE_DIR = path.join(dir, 'state');
  process.env.RIG_RESULTS = path.join(dir, 'results');
  const dev: DevServerOptions = { ip: '127.0.0.1', port: await freePort(), uiPort: await freePort(), dir: path.join(dir, 'temporal') };
  await devUp(dev);
  const address = `127.0.0.1:${dev.port}`;
  const connection = await Connection.connect({ address });
  return {
    dir,
    dev,
    address,
    client: new Client({ connection }),
    async close() {
      await connection.close().catch(() => undefined);
      await devDown(dev);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
