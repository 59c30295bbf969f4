// The steps that make an AWS rig whole after provisioning, each on the node that can do it:
// - on the load node (the only host that reaches the database): the roles, the database and the
//   owner's default privileges, then the migrations, as the local rig's provision does them;
// - on the app node: the reference service, connected as the app role, listening on the node's own
//   address on SERVICE_PORT (the nodes' security group lets the load node reach it); or the spec's
//   container image (service.run.image, app-container.ts) on the same port.
// Both are safe to run twice: setupRoles and migrate are idempotent, and a service this campaign
// already started and that answers is kept.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setupRoles } from '../../../reference/roles';
import { migrate } from '../../../reference/migrate';
import { isAlive } from '../local/proc';
import { healthy, SERVICE_SCRIPT, startService, stopService } from '../local/service-process';
import type { ProgressFn, ServiceParameters } from '../target';
import { awsDbUrls, awsWorkDir, DB_NAME, rigRegion } from './data-plane';
import { SERVICE_PORT } from './connection';
import { emulatorMap } from './emulator-map';
import { startAwsContainer } from './app-container';
import { ServiceRefusal } from '../service-refusal';
import { readRigSecret } from './secrets';
import { awsClients } from './clients';

const SERVICE_RESOURCE = 'aws-app-service';

export async function prepareAwsDatabase(campaignId: string, onProgress: ProgressFn): Promise<string> {
  const urls = await awsDbUrls(campaignId);
  const c = awsClients(rigRegion(campaignId));
  const secret = await readRigSecret(c, campaignId).finally(() => c.destroy());
  onProgress('making the roles, the database and the default privileges (before the first migration)');
  await setupRoles(urls.superuserUrl, { ownerPassword: secret.ownerPassword, appPassword: secret.appPassword, database: DB_NAME });
  onProgress('migrating as the owner');
  const m = await migrate(urls.ownerUrl);
  return `roles and database ready; migrations: ${JSON.stringify(m).slice(0, 200)}`;
}

function serviceFiles(campaignId: string) {
  const dir = path.join(awsWorkDir(campaignId), 'app');
  fs.mkdirSync(dir, { recursive: true });
  return { dir, pidFile: path.join(dir, 'service.pid'), urlFile: path.join(dir, 'service.url'), logFile: path.join(dir, 'service.log') };
}

/** This node's private IPv4 address: what the load node reaches the service at. */
function ownAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('the app node has no non-loopback IPv4 address');
}

/** Starts the service on the app node (or finds the one this campaign started); returns the URL the load node uses. */
export async function startAwsService(campaignId: string, service: ServiceParameters, onProgress: ProgressFn): Promise<{ serviceUrl: string; reused: boolean }> {
  const f = serviceFiles(campaignId);
  const run = service.run;
  if (run?.command) throw new ServiceRefusal('service.run.command: an aws app node runs a container image (service.run.image), not a command');
  if (run?.image !== undefined) {
    // The user's build (issue 14): a container on the node's own address and the service port.
    if (emulatorMap() !== undefined) throw new ServiceRefusal('service.run.image: the emulated app node has no Docker; an image runs on a real app node only');
    const urls = await awsDbUrls(campaignId);
    await startAwsContainer({ campaignId, run: { ...run, image: run.image }, service, databaseUrl: urls.appUrl, servicePort: SERVICE_PORT, dir: f.dir }, onProgress);
    return { serviceUrl: `http://${ownAddress()}:${SERVICE_PORT}`, reused: false };
  }
  const pid = Number(fs.existsSync(f.pidFile) ? fs.readFileSync(f.pidFile, 'utf8').trim() : NaN);
  const known = fs.existsSync(f.urlFile) ? fs.readFileSync(f.urlFile, 'utf8').trim() : '';
  if (Number.isInteger(pid) && isAlive(pid) && known && (await healthy(known))) return { serviceUrl: known, reused: true };
  if (Number.isInteger(pid)) await stopService(pid, { campaignId, resourceId: SERVICE_RESOURCE, script: SERVICE_SCRIPT });
  // Under the emulator the app node is this machine: loopback and a free port, like the local rig.
  const emulated = emulatorMap() !== undefined;
  const urls = await awsDbUrls(campaignId);
  onProgress('starting the reference service');
  const started = await startService({
    campaignId,
    resourceId: SERVICE_RESOURCE,
    rigDir: f.dir,
    databaseUrl: urls.appUrl,
    service,
    logFile: f.logFile,
    pidFile: f.pidFile,
    onSpawned: () => undefined,
    ...(emulated ? {} : { listen: { host: '0.0.0.0', port: SERVICE_PORT } }),
  });
  const serviceUrl = emulated ? started.url : `http://${ownAddress()}:${SERVICE_PORT}`;
  fs.writeFileSync(f.urlFile, `${serviceUrl}\n`);
  return { serviceUrl, reused: false };
}

/**
 * Under the emulator only: stop the service the app node's worker (this machine) started. On AWS,
 * terminating the node ends it; here nothing would, and the local clean check would see it.
 */
export async function stopEmulatedService(campaignId: string): Promise<string | undefined> {
  const map = emulatorMap();
  if (!map) return undefined;
  const f = map.appNodeStateDir ? path.join(map.appNodeStateDir, 'aws-nodes', campaignId, 'app', 'service.pid') : path.join(awsWorkDir(campaignId), 'app', 'service.pid');
  if (!fs.existsSync(f)) return undefined;
  const pid = Number(fs.readFileSync(f, 'utf8').trim());
  const outcome = await stopService(pid, { campaignId, resourceId: SERVICE_RESOURCE, script: SERVICE_SCRIPT });
  fs.rmSync(path.dirname(f), { recursive: true, force: true });
  return `emulated app node's service (pid ${pid}): ${outcome}`;
}
