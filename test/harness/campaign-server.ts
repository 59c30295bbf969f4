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
      await killServer(dev);
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

/**
 * The file's server at its end: SIGKILL, not `rig dev down`'s graceful stop, which waits about 4 s for
 * the server to flush a database that is removed right after. (A test that restarts the server on the
 * same database, restartServer, still goes through devDown/devUp.) devDown when no record is found.
 */
async function killServer(dev: DevServerOptions): Promise<void> {
  const recordFile = path.join(dev.dir!, 'dev-server.json');
  let pid: number | undefined;
  try {
    pid = (JSON.parse(fs.readFileSync(recordFile, 'utf8')) as { pid: number }).pid;
  } catch {
    await devDown(dev);
    return;
  }
  // Only if it is still our start-dev on this folder's database (pids get reused).
  const ours = () => {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return cmd.includes('start-dev') && cmd.some((a) => a.startsWith(dev.dir!));
    } catch {
      return false;
    }
  };
  if (!ours()) return devDown(dev).then(() => undefined);
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && ours(); i++) await new Promise((r) => setTimeout(r, 50));
  fs.rmSync(recordFile, { force: true });
}
