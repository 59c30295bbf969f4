// Provision a local rig for a campaign: a PostgreSQL cluster with the campaign's settings, the roles,
// database and default privileges (before the first migration: the spec's trap), the schema, and the
// reference service, detached. Every resource is written to the ledger BEFORE it is made. Called again
// for the same campaign it finds the live rig and reuses it (starting what has died); a half-made rig
// (a crash mid-provision) is torn down and made again, except in RDS-fidelity mode once the database
// was prepared (resumePrepared): there the cluster stands for the RDS instance, which a retried
// attempt meets as the dead one left it, and the roles and migrations run again against it, as a
// retried `prepare` does on AWS.
import fs from 'node:fs';
import path from 'node:path';
import { serviceBuild } from '../../protocol/service-spec';
import { setupRoles } from '../../../reference/roles';
import { migrate } from '../../../reference/migrate';
import type { ProgressFn, ProvisionResult, RigParameters, ServiceParameters } from '../target';
import { connectionFromRecord, dbUrlsOf, ROLE_NAMES } from './connection';
import { appendLedger, liveResources, nextServiceId } from './ledger';
import { withCampaignLock } from './lock';
import { pgOsUser } from './pg-binaries';
import { PgCluster } from './pg-cluster';
import { clusterPlace, prepareClusterPlace } from './pg-data-root';
import { pidMatches, scanMarkedProcesses } from './proc';
import { refuseReservedSettings } from './rds-fidelity';
import { withLocalDefaults } from './memory-defaults';
import { readRigRecord, writeRigRecord, type RigRecord } from './rig-record';
import { MARKER_CAMPAIGN, MARKER_RESOURCE, MARKER_RIG_DIR, rigPaths } from './rig-paths';
import { newSecrets, readSecrets, writeSecrets } from './secrets';
import { healthy, SERVICE_SCRIPT, startService, stopLedgerService } from './service-process';
import { assertCommandStartable } from './service-command';
import { teardownUnlocked } from './teardown';

/** The RDS-fidelity cluster's admin: the name the AWS target gives RDS's master user (aws/connection.ts DB_MASTER_USER). */
export const RDS_ADMIN = 'rig_admin';

/** postgresql.conf settings for a campaign: its choices over the local defaults, plus the logging the evidence needs. */
export function postgresParameters(params: RigParameters): Record<string, string | number | boolean> {
  // A setting the spec leaves out takes the local default (memory-defaults.ts), scaled from this host.
  const db = withLocalDefaults(params.db ?? {});
  const out: Record<string, string | number | boolean> = {};
  if (db.shared_buffers !== undefined) out.shared_buffers = db.shared_buffers;
  if (db.min_wal_size !== undefined) out.min_wal_size = db.min_wal_size;
  if (db.max_wal_size !== undefined) out.max_wal_size = db.max_wal_size;
  if (db.autovacuum_vacuum_insert_scale_factor !== undefined) {
    out.autovacuum_vacuum_insert_scale_factor = db.autovacuum_vacuum_insert_scale_factor;
  }
  if (db.wal_compression !== undefined) out.wal_compression = db.wal_compression;
  // RDS's default parameter group's value (PostgreSQL's own is 60 s): the local rig rehearses the
  // database the campaign will meet, and the seed's settle waits for the autoanalyze a load makes due
  // (lib/targets/settle.ts), which at 60 s would add up to a minute to every small seed.
  out.autovacuum_naptime = '15s';
  Object.assign(out, db.extra ?? {});
  // Always: the run journal attributes stalls to checkpoints and vacuum passes from these lines.
  out.log_checkpoints = 'on';
  out.log_autovacuum_min_duration = 0;
  return out;
}

export async function provisionLocal(campaignId: string, params: RigParameters, onProgress: ProgressFn = () => {}): Promise<ProvisionResult> {
  // A user's command that cannot start here is refused before anything is made.
  await assertCommandStartable(params.service?.run);
  // ... and a variant's own build, now rather than when the control has been measured.
  for (const v of params.variantRuns ?? []) await assertCommandStartable(v.run, v.field);
  // RDS keeps its own server settings; so does fidelity mode, before anything is made.
  if (params.local?.rdsFidelity) refuseReservedSettings(postgresParameters(params));
  return withCampaignLock(campaignId, async () => {
    if (liveResources(campaignId).length > 0) {
      const rec = readRigRecord(campaignId);
      // A complete record whose cluster folder is intact is a rig to reuse; anything less (a provision
      // that did not finish, a folder half removed) is removed and made again.
      const intact = rec && fs.existsSync(path.join(rec.cluster.dir, 'cluster.json')) && fs.existsSync(rec.cluster.dataDir);
      if (rec?.complete && intact) return reuse(rec, params, onProgress);
      if (rec && intact && params.local?.rdsFidelity && rec.cluster.admin) return resumePrepared(rec, params, onProgress);
      onProgress(`campaign ${campaignId} has a half-made or damaged rig: removing it first`);
      await teardownUnlocked(campaignId, onProgress);
    }
    return make(campaignId, params, onProgress);
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): string =>
    JSON.stringify(v, (_k, x: unknown) =>
      x && typeof x === 'object' && !Array.isArray(x)
        ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([p], [q]) => p.localeCompare(q)))
        : x,
    );
  return norm(a) === norm(b);
}

async function reuse(rec: RigRecord, params: RigParameters, onProgress: ProgressFn): Promise<ProvisionResult> {
  const campaignId = rec.campaignId;
  const wanted = postgresParameters(params);
  if (!sameJson(wanted, rec.postgresParameters)) {
    throw new Error(
      `campaign ${campaignId} already has a rig with PostgreSQL parameters ${JSON.stringify(rec.postgresParameters)}, ` +
        `not ${JSON.stringify(wanted)}: tear it down first (or use another campaign id)`,
    );
  }
  const fidelity = Boolean(params.local?.rdsFidelity);
  if (fidelity !== Boolean(rec.cluster.admin)) {
    throw new Error(
      `campaign ${campaignId} already has a rig ${rec.cluster.admin ? 'in' : 'without'} RDS-fidelity mode, and this spec asks for local.rdsFidelity ${fidelity}: ` +
        'tear it down first (or use another campaign id)',
    );
  }
  if (!sameJson(params.service ?? {}, rec.params.service ?? {})) {
    throw new Error(
      `campaign ${campaignId} already has a rig whose service runs with ${JSON.stringify(rec.params.service ?? {})}, ` +
        `not ${JSON.stringify(params.service ?? {})}: use restartServiceLocal to change it`,
    );
  }
  const cluster = PgCluster.attach(rec.cluster.dir);
  if (!cluster.isRunning()) {
    onProgress(`the cluster of ${campaignId} was stopped: starting it`);
    await startCluster(cluster);
    appendLedger(campaignId, 'made', 'cluster', 'cluster', { pid: cluster.postmasterPid(), port: cluster.port, note: 'restarted' });
  }
  const svc = rec.service;
  const script = rec.params.service?.run ? undefined : SERVICE_SCRIPT;
  const alive = svc && pidMatches(svc.pid, { cmdlineHas: script, campaignId, resourceId: svc.resourceId }) && (await healthy(svc.url));
  if (!alive) {
    onProgress(`the service of ${campaignId} is not answering: starting a new one`);
    rec.service = await replaceService(rec, rec.params.service ?? {}, onProgress);
    writeRigRecord(rec);
  }
  onProgress(`reusing the live rig of ${campaignId}`);
  return { ...connectionFromRecord(rec), reused: true };
}

/**
 * RDS-fidelity mode, an attempt that died after the database was prepared (the record is written,
 * not complete: during the service's start): the cluster is kept, the roles and migrations run
 * again as the non-superuser admin (they must succeed on what the dead attempt made), the service is
 * replaced (replaceService stops one the dead attempt left).
 */
async function resumePrepared(rec: RigRecord, params: RigParameters, onProgress: ProgressFn): Promise<ProvisionResult> {
  const campaignId = rec.campaignId;
  if (!sameJson(postgresParameters(params), rec.postgresParameters) || !sameJson(params.service ?? {}, rec.params.service ?? {})) {
    onProgress(`campaign ${campaignId} has a half-made rig made for other settings: removing it first`);
    await teardownUnlocked(campaignId, onProgress);
    return make(campaignId, params, onProgress);
  }
  const cluster = PgCluster.attach(rec.cluster.dir);
  if (!cluster.isRunning()) {
    await startCluster(cluster);
    appendLedger(campaignId, 'made', 'cluster', 'cluster', { pid: cluster.postmasterPid(), port: cluster.port, note: 'restarted' });
  }
  const secrets = readSecrets(campaignId);
  onProgress(`resuming the half-made rig of ${campaignId} (RDS-fidelity: its database is kept, as RDS keeps an instance across attempts): roles, database and migrations again as ${RDS_ADMIN}`);
  const roles = await setupRoles(cluster.url('postgres', RDS_ADMIN, secrets.adminPassword), { ownerPassword: secrets.ownerPassword, appPassword: secrets.appPassword });
  await migrate(roles.ownerUrl);
  rec.service = await replaceService(rec, params.service ?? {}, onProgress);
  rec.complete = true;
  writeRigRecord(rec);
  onProgress(`rig ${campaignId} ready: service ${rec.service.url}`);
  return { ...connectionFromRecord(rec), reused: true };
}

async function startCluster(cluster: PgCluster): Promise<void> {
  try {
    await cluster.start();
  } catch (err) {
    throw new Error(`${(err as Error).message}\nlast lines of ${cluster.logFile}:\n${tailOf(cluster.logFile)}`);
  }
}

function tailOf(file: string, n = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-n).join('\n');
  } catch {
    return '(no log)';
  }
}

async function make(campaignId: string, params: RigParameters, onProgress: ProgressFn): Promise<ProvisionResult> {
  const paths = rigPaths(campaignId);
  const markers = { [MARKER_CAMPAIGN]: campaignId, [MARKER_RIG_DIR]: paths.dir };
  // Where the cluster can live for the OS user PostgreSQL runs as (pg-data-root.ts): decided, or
  // refused naming the folder, before anything is made; recorded below, never decided again.
  const osUser = pgOsUser();
  const place = clusterPlace(campaignId, paths.dir, osUser);
  const clusterDir = place.dir;
  // Processes of this campaign that its ledger does not list (a ledger removed by hand): making a new
  // rig beside them would orphan them for good. Refuse, naming them.
  const strays = scanMarkedProcesses().marked.filter((p) => p.campaignId === campaignId);
  if (strays.length) {
    throw new Error(
      `campaign ${campaignId} has processes its ledger does not list: ${strays.map((p) => `pid ${p.pid} (${p.resourceId})`).join(', ')}. ` +
        'Stop them (rig check --target local lists them) before provisioning again',
    );
  }

  appendLedger(campaignId, 'intend', 'rig-dir', 'rig-dir', { path: paths.dir });
  if (fs.existsSync(paths.dir)) {
    // Not in the ledger as live, so nothing of ours runs there (teardown would have listed it): stale debris.
    fs.rmSync(paths.dir, { recursive: true, force: true });
  }
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(paths.dir, 0o755); // the DB's OS user must traverse it to reach its own folder
  appendLedger(campaignId, 'made', 'rig-dir', 'rig-dir', {});

  const secrets = newSecrets();
  writeSecrets(campaignId, secrets);

  const pgParams = postgresParameters(params);
  const fidelity = Boolean(params.local?.rdsFidelity);
  const dataDir = `${clusterDir}/data`;
  appendLedger(campaignId, 'intend', 'cluster', 'cluster', { path: clusterDir, dataDir });
  prepareClusterPlace(place, osUser);
  if (place.root && fs.existsSync(clusterDir)) fs.rmSync(clusterDir, { recursive: true, force: true }); // debris of an attempt the ledger now covers
  onProgress(`initdb ${dataDir}${place.root ? ` (${place.why})` : ''}`);
  let cluster: PgCluster;
  try {
    cluster = await PgCluster.create({
      dir: clusterDir,
      parameters: pgParams,
      superuserPassword: secrets.superuserPassword,
      env: { ...markers, [MARKER_RESOURCE]: 'cluster' },
      ...(fidelity ? { rdsFidelity: { admin: RDS_ADMIN, adminPassword: secrets.adminPassword! } } : {}),
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}\nlast lines of ${clusterDir}/postgres.log:\n${tailOf(`${clusterDir}/postgres.log`)}`);
  }
  appendLedger(campaignId, 'made', 'cluster', 'cluster', { pid: cluster.postmasterPid(), port: cluster.port, binDir: cluster.binDir });
  onProgress(`cluster up on port ${cluster.port}`);

  // In RDS-fidelity mode the roles are made as RDS makes them: by the non-superuser admin, over TLS.
  const adminUrl = fidelity
    ? cluster.url('postgres', RDS_ADMIN, secrets.adminPassword)
    : cluster.url('postgres', cluster.info.superuser, secrets.superuserPassword);
  onProgress(`creating roles, database and default privileges${fidelity ? ` as ${RDS_ADMIN} (not a superuser: RDS-fidelity mode)` : ''}`);
  const roles = await setupRoles(adminUrl, { ownerPassword: secrets.ownerPassword, appPassword: secrets.appPassword });
  onProgress('migrating');
  await migrate(roles.ownerUrl);

  const rec: RigRecord = {
    campaignId,
    createdAt: new Date().toISOString(),
    complete: false,
    params,
    postgresParameters: pgParams,
    cluster: {
      dir: clusterDir,
      dataDir: cluster.dataDir,
      host: cluster.host,
      port: cluster.port,
      binDir: cluster.binDir,
      logFile: cluster.logFile,
      superuser: cluster.info.superuser,
      ...(cluster.info.admin ? { admin: cluster.info.admin } : {}),
      ...(cluster.info.tls ? { tls: cluster.info.tls } : {}),
    },
    database: roles.database,
    ownerRole: ROLE_NAMES.owner,
    appRole: ROLE_NAMES.app,
  };
  writeRigRecord(rec);
  rec.service = await replaceService(rec, params.service ?? {}, onProgress);
  rec.complete = true;
  writeRigRecord(rec);
  onProgress(`rig ${campaignId} ready: service ${rec.service.url}`);
  return { ...connectionFromRecord(rec), reused: false };
}

/** Stop the rig's current service (if any, and only if it is still ours), then start a new one. */
async function replaceService(rec: RigRecord, service: ServiceParameters, onProgress: ProgressFn): Promise<NonNullable<RigRecord['service']>> {
  const campaignId = rec.campaignId;
  const paths = rigPaths(campaignId);
  // By pid and by marker: a dead attempt may have started one whose pid never reached the ledger.
  for (const r of liveResources(campaignId).filter((x) => x.kind === 'service')) {
    if (await stopLedgerService(r, onProgress)) onProgress(`stopped ${r.id}, which an earlier attempt started`);
    appendLedger(campaignId, 'removed', r.id, 'service', { note: 'replaced' });
  }
  const secrets = readSecrets(campaignId);
  const id = nextServiceId(campaignId);
  const logFile = paths.serviceLogFor(id);
  const what = service.run?.command ? { command: service.run.command } : { script: SERVICE_SCRIPT };
  appendLedger(campaignId, 'intend', id, 'service', { ...what, logFile, pidFile: paths.servicePidFile });
  onProgress(`starting ${service.run ? serviceBuild(service.run) : 'the reference service'} (${id})`);
  // With its TLS settings: in RDS-fidelity mode the service verifies the cluster as it would RDS.
  const appUrl = dbUrlsOf(rec, secrets).appUrl;
  const started = await startService({
    campaignId,
    resourceId: id,
    rigDir: paths.dir,
    databaseUrl: appUrl,
    service,
    logFile,
    pidFile: paths.servicePidFile,
    onSpawned: (pid) => appendLedger(campaignId, 'made', id, 'service', { pid }),
  });
  appendLedger(campaignId, 'made', id, 'service', { pid: started.pid, port: started.port, url: started.url });
  return { resourceId: id, pid: started.pid, port: started.port, url: started.url, logFile, pidFile: paths.servicePidFile };
}

/** Restart the rig's service with other settings (the bench compares insert modes on one cluster). */
export function restartServiceLocal(campaignId: string, service: ServiceParameters, onProgress: ProgressFn = () => {}): Promise<ProvisionResult> {
  return withCampaignLock(campaignId, async () => {
    const rec = readRigRecord(campaignId);
    if (!rec?.complete) throw new Error(`no provisioned local rig for campaign ${campaignId}: provision it first`);
    rec.service = await replaceService(rec, service, onProgress);
    rec.params = { ...rec.params, service };
    writeRigRecord(rec);
    return { ...connectionFromRecord(rec), reused: true };
  });
}
