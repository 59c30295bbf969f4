// A variant's settings applied to a live local rig (issue 13): database parameters by ALTER SYSTEM
// (reloaded; the cluster restarted when one of them needs it, e.g. shared_buffers), the service
// restarted when its settings change (the switches and service.env, compared as the environment it
// would get; or when the database restarted under it, whose pool would hold dead connections). Everything is read back from where it took effect (pg_settings, the
// service's /healthz) and returned, so the evidence shows what ran, not what was asked.
// Idempotent: a retry sets the same values again and restarts nothing that already runs with them.
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import type { HealthResponse } from '../../protocol/hardcount-api';
import { settingsEnv } from '../../protocol/service-spec';
import type { AppliedSettings, DbParameters, ProgressFn, ServiceParameters } from '../target';
import { rigDbUrls } from './connection';
import { appendLedger } from './ledger';
import { withCampaignLock } from './lock';
import { PgCluster } from './pg-cluster';
import { postgresParameters, restartServiceLocal } from './provision';
import { readRigRecord, writeRigRecord } from './rig-record';

interface SettingRow {
  name: string;
  setting: string;
  unit: string | null;
  pending_restart: boolean;
}

const UNIT_KB: Record<string, number> = { kB: 1, '8kB': 8, MB: 1024, '16MB': 16 * 1024, GB: 1024 * 1024, TB: 1024 * 1024 * 1024 };
/** PostgreSQL's time units (its GUC parser's), in ms. */
const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** Whether pg_settings' value (in its unit) is the requested one ("256MB", "15s", 0.02, "lz4"). Pure. */
export function settingMatches(requested: string | number | boolean, row: Pick<SettingRow, 'setting' | 'unit'>): boolean {
  const unitKb = row.unit ? UNIT_KB[row.unit] : undefined;
  if (unitKb !== undefined) {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(kB|MB|GB|TB)?\s*$/.exec(String(requested));
    if (!m) return false;
    const kb = Number(m[1]) * (m[2] ? UNIT_KB[m[2]] : unitKb);
    return Math.abs(Number(row.setting) * unitKb - kb) < 1;
  }
  // Times: "15s" asked, pg_settings says 15 in unit "s" (a bare number is in the setting's own unit).
  const unitMs = row.unit ? UNIT_MS[row.unit] : undefined;
  if (unitMs !== undefined && typeof requested === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$/.exec(requested);
    if (!m) return false;
    const ms = Number(m[1]) * (m[2] ? UNIT_MS[m[2]] : unitMs);
    return Math.abs(Number(row.setting) * unitMs - ms) < 1e-6;
  }
  if (typeof requested === 'number') return Math.abs(Number(row.setting) - requested) < 1e-9;
  if (typeof requested === 'boolean') return row.setting === (requested ? 'on' : 'off');
  return row.setting === requested;
}

/**
 * A setting as read back, in a unit a reader knows: pg_settings gives shared_buffers as "8192" pages of
 * "8kB", which written side by side reads "81928kB". Sizes become the largest whole kB/MB/GB; the rest
 * are their value and unit as PostgreSQL gives them ("200ms", "0.02", "lz4"). Pure.
 */
export function settingText(row: Pick<SettingRow, 'setting' | 'unit'>): string {
  const unitKb = row.unit ? UNIT_KB[row.unit] : undefined;
  if (unitKb === undefined || !/^\d+$/.test(row.setting)) return `${row.setting}${row.unit ?? ''}`;
  const kb = Number(row.setting) * unitKb;
  if (kb > 0 && kb % (1024 * 1024) === 0) return `${kb / (1024 * 1024)}GB`;
  if (kb > 0 && kb % 1024 === 0) return `${kb / 1024}MB`;
  return `${kb}kB`;
}

async function readSettings(url: string, names: string[]): Promise<SettingRow[]> {
  const c = new pg.Client(pgConfig(url));
  await c.connect();
  try {
    return (await c.query<SettingRow>('SELECT name, setting, unit, pending_restart FROM pg_settings WHERE name = ANY($1) ORDER BY name', [names])).rows;
  } finally {
    await c.end();
  }
}

/** Polls (a reload is a signal the postmaster handles in its own time) until every setting matches or `ms` pass. */
async function settled(url: string, wanted: Record<string, string | number | boolean>, ms: number): Promise<SettingRow[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const rows = await readSettings(url, Object.keys(wanted));
    const ok = rows.every((r) => r.pending_restart || settingMatches(wanted[r.name], r));
    if (ok || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function sameEnv(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

export async function applySettingsLocal(campaignId: string, settings: { database: DbParameters; service: ServiceParameters }, onProgress: ProgressFn): Promise<AppliedSettings> {
  const wanted = postgresParameters({ db: settings.database });
  // As the bootstrap superuser: on RDS a variant is a parameter-group change, which the master user's SQL cannot make.
  const { bootstrapUrl: superuserUrl } = rigDbUrls(campaignId);
  const { rows, restartedDatabase } = await withCampaignLock(campaignId, async () => {
    const c = new pg.Client(pgConfig(superuserUrl));
    await c.connect();
    try {
      // ALTER SYSTEM takes no parameters: names come from postgresParameters (fixed keys), values are quoted as literals.
      for (const [name, value] of Object.entries(wanted)) await c.query(`ALTER SYSTEM SET ${pg.escapeIdentifier(name)} = ${pg.escapeLiteral(String(value))}`);
      await c.query('SELECT pg_reload_conf()');
    } finally {
      await c.end();
    }
    const rec = readRigRecord(campaignId);
    if (!rec?.complete) throw new Error(`no provisioned local rig for campaign ${campaignId}`);
    // rig.json says what the cluster runs with, reloaded or restarted.
    rec.postgresParameters = { ...rec.postgresParameters, ...wanted };
    writeRigRecord(rec);
    const reloaded = await settled(superuserUrl, wanted, 5000);
    const pending = reloaded.filter((r) => r.pending_restart).map((r) => r.name);
    if (!pending.length) return { rows: reloaded, restartedDatabase: null };
    onProgress(`restarting the cluster: ${pending.join(', ')} take effect only at a restart`);
    const cluster = PgCluster.attach(rec.cluster.dir);
    await cluster.stop();
    await cluster.start();
    appendLedger(campaignId, 'made', 'cluster', 'cluster', { pid: cluster.postmasterPid(), port: cluster.port, note: `restarted for ${pending.join(', ')}` });
    // Read again only after a restart: a reload's values were read above.
    return { rows: await settled(superuserUrl, wanted, 5000), restartedDatabase: pending };
  });
  const wrong = rows.filter((r) => r.pending_restart || !settingMatches(wanted[r.name], r));
  if (wrong.length) throw new Error(`the cluster does not run with what was set: ${wrong.map((r) => `${r.name} = ${settingText(r)} (asked ${wanted[r.name]})`).join(', ')}`);

  const rec = readRigRecord(campaignId);
  const running = rec?.params.service ?? {};
  // The environment each would be started with (switches as HC_*, then env) and the build: the service restarts when either differs.
  const same = sameEnv(settingsEnv(running), settingsEnv(settings.service)) && JSON.stringify(running.run ?? null) === JSON.stringify(settings.service.run ?? null);
  let restartedService = false;
  if (!same || restartedDatabase) {
    onProgress(`restarting the service with ${JSON.stringify(settings.service)}${restartedDatabase ? ' (the database restarted under it)' : ''}`);
    await restartServiceLocal(campaignId, settings.service, onProgress);
    restartedService = true;
  }
  const url = readRigRecord(campaignId)?.service?.url;
  if (!url) throw new Error(`rig ${campaignId} has no service`);
  const health = (await (await fetch(`${url}/healthz`)).json()) as HealthResponse;
  return {
    database: Object.fromEntries(rows.map((r) => [r.name, settingText(r)])),
    service: health.settings ?? {},
    restarted: { database: restartedDatabase ?? [], service: restartedService },
    serviceUrl: url,
  };
}
