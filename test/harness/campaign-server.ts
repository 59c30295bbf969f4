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

export async function startCampaignServer(prefix = 'rig-e2e-', server: Pick<DevServerOptions, 'dynamicConfig'> = {}): Promise<CampaignServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  // Activities in this process read these at call time.
  process.env.RIG_STATE_DIR = path.join(dir, 'state');
  process.env.RIG_RESULTS = path.join(dir, 'results');
  const dev = await upOnFreePorts(path.join(dir, 'temporal'), server);
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

/**
 * A free port is free when asked, not when the server binds it: the dev server's own internal
 * listeners take ephemeral ports as it starts and can take ours first (a CI run failed so: "bind:
 * address already in use"). Headless (no UI port), and tried again on fresh ports when that happens.
 */
async function upOnFreePorts(temporalDir: string, server: Pick<DevServerOptions, 'dynamicConfig'>): Promise<DevServerOptions> {
  for (let attempt = 1; ; attempt++) {
    const dev: DevServerOptions = { ip: '127.0.0.1', port: await freePort(), uiPort: 0, headless: true, dir: temporalDir, ...server };
    try {
      await devUp(dev);
      return dev;
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
      console.error(`dev server: ${(err as Error).message.split('\n').find((l) => l.includes('address already in use'))}; trying other ports`);
    }
  }
}
