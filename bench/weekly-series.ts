// npm run bench:weekly (issue 45's must-show): a real weekly series whose slowed build adds about 10 %
// to p50, not a second. Does RigRegressed go up on the first slow run, and stay down on the weeks before?
//
//   npm run bench:weekly [-- --stable N] [-- --slow N] [-- --added-wait-us US] [-- --rate R] [-- --seconds S]
//
// What runs, all real: one PostgreSQL cluster with the reference schema and the reference service on it
// (a team's staging deployment, target "existing"), a private Temporal dev server and the rig's workers,
// and `rig schedule create weekly` whose runs are started by the schedule's trigger, as its cron would.
// Every week a new build is deployed: the service is stopped and started again (HC_BUILD svc-1, svc-2,
// ...), because a release restarts the service and a restart alone moves p50 (issue 45 measured about
// +/-12 %); a series that never restarted would flatter the detector. The first N stable weeks run
// the same code; the weeks after add HC_ADDED_WAIT_US per request (the reference service's wait switch,
// lib/targets/local/switch-calibration.ts; `npm run bench:switches` measures what it adds), sized here
// to about 10 % of the stable weeks' p50.
//
// Each week is one campaign of one repeat (no calibration: the instrument is not what a weekly run
// re-proves), its report step reading the history of the weeks before it (lib/evidence/history-alert.ts:
// the first-run step test from the 6th week on, change points, floors) and setting RigRegressed.
// Prints one row per week: build, p50, p99, the step test's verdict, RigRegressed, and what it named.
// Nothing here passes or fails: the table is the measurement (docs/benchmarks.md, "bench:weekly").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startCampaignServer } from '../test/harness/campaign-server';
import { rig } from '../test/harness/rig-cli';
import { deploy, undeploy, type Deployed } from '../test/harness/reference-deployment';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../lib/protocol/spec';
import type { HistoryAlert } from '../lib/evidence/history-alert';
import { PgCluster } from '../lib/targets/local/pg-cluster';
import { migrate } from '../reference/migrate';
import { setupRoles } from '../reference/roles';
import { median } from '../lib/protocol/percentile';
import { createRigWorkers } from '../worker/run-worker';

Runtime.install({ logger: new DefaultLogger('ERROR') });

function intArg(name: string, dflt: number, min: number, max: number): number {
  const i = process.argv.indexOf(name);
  const n = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${process.argv[i + 1]})`);
  return n;
}

/** Stable weeks: the alert judges from the 7th run on (6 earlier runs, MIN_HISTORY_RUNS), so 8 leave two judged stable weeks. */
const STABLE = intArg('--stable', 8, 6, 30);
const SLOW = intArg('--slow', 2, 1, 10);
/** µs added per request; 0 = sized from the stable weeks' p50 (10 % of their median). */
const ADDED_WAIT_US = intArg('--added-wait-us', 0, 0, 1_000_000);
const RATE = intArg('--rate', 240, 10, 2000);
const SECONDS = intArg('--seconds', 30, 5, 600);

interface Week {
  build: string;
  id: string;
  status: string;
  p50: number | null;
  p99: number | null;
  regressed: string | undefined;
  alert: HistoryAlert | null;
}

async function main(): Promise<void> {
  const started = Date.now();
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-weekly-pg-'));
  fs.chmodSync(pgDir, 0o755);
  const cluster = await PgCluster.create({ dir: pgDir, parameters: { autovacuum_naptime: '15s' } });
  const server = await startCampaignServer('rig-bench-weekly-');
  let svc: Deployed | null = null;
  const { connection, workers } = await createRigWorkers({ env: { address: server.address, namespace: 'default' } });
  const running = Promise.all(workers.map((w) => w.run()));
  const weeks: Week[] = [];
  try {
    const { ownerUrl, appUrl } = await setupRoles(cluster.url(), { ownerPassword: 'owner-pw-weekly', appPassword: 'app-pw-weekly' });
    await migrate(ownerUrl);
    process.env.RIG_BENCH_WEEKLY_DATABASE_URL = ownerUrl;
    const appFile = path.join(server.dir, 'app-url');
    fs.writeFileSync(appFile, appUrl + '\n', { mode: 0o600 });
    const childEnv = { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };

    svc = await deploy({ HC_DATABASE_URL: appUrl, HC_BUILD: 'svc-1' });
    const spec: CampaignSpecInput = {
      name: 'weekly',
      target: 'existing',
      calibrate: false,
      watchdogMinutes: 30,
      existing: { serviceUrl: svc.url, databaseUrlFrom: { env: 'RIG_BENCH_WEEKLY_DATABASE_URL' }, appDatabaseUrlFrom: { file: appFile } },
      seed: { customers: 200, historyRows: 0, settleTimeoutSeconds: 60, intoExisting: true },
      // One repeat a week, after a 5-s warm-up of the freshly deployed build: the series' points.
      sustained: { repeats: 1, repeatSeconds: SECONDS, cooldownSeconds: 0, warmupSeconds: 5, drift: 'noted', configurations: [{ name: 'single', eventsPerSecond: RATE, batch: 1, p99LimitMs: 50 }] },
    };
    const specFile = path.join(server.dir, 'weekly.json');
    fs.writeFileSync(specFile, JSON.stringify(spec));
    const created = await rig(['schedule', 'create', 'weekly', specFile, '--cron', '0 3 * * 1'], childEnv);
    if (created.code !== 0) throw new Error(`rig schedule create: ${created.stderr}`);
    const schedule = server.client.schedule.getHandle('weekly');

    const runWeek = async (build: string): Promise<Week> => {
      const seen = new Set(weeks.map((w) => w.id));
      await schedule.trigger();
      let id: string | undefined;
      for (let tries = 0; !id && tries < 240; tries++) {
        for await (const wf of server.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = 'weekly'` })) if (!seen.has(wf.workflowId)) id = wf.workflowId;
        if (!id) await new Promise((r) => setTimeout(r, 250));
      }
      if (!id) throw new Error('the schedule started no run within 60 s');
      const handle = server.client.workflow.getHandle(id);
      const result = (await handle.result()) as CampaignResult;
      const regressed = ((await handle.describe()).searchAttributes?.RigRegressed as string[] | undefined)?.[0];
      const alertFile = path.join(result.resultsDir, 'history-alert.json');
      const alert = fs.existsSync(alertFile) ? (JSON.parse(fs.readFileSync(alertFile, 'utf8')) as HistoryAlert) : null;
      const passed = result.repeats.filter((r) => r.kind === 'sustained' && r.passed);
      const week: Week = { build, id, status: result.status, p50: passed[0]?.p50Ms ?? null, p99: passed[0]?.p99Ms ?? null, regressed, alert };
      process.stderr.write(`week ${weeks.length + 1} (${build}): ${result.status}, p50 ${week.p50?.toFixed(3) ?? '-'} ms, RigRegressed ${regressed ?? '-'}${alert?.summary ? `: ${alert.summary}` : ''}\n`);
      return week;
    };

    /** A release: the same port, a new build, the service restarted. */
    const release = async (build: string, extra: Record<string, string> = {}) => {
      await undeploy(svc!.child);
      svc = await deploy({ HC_DATABASE_URL: appUrl, HC_PORT: String(svc!.port), HC_BUILD: build, ...extra });
    };

    for (let i = 1; i <= STABLE; i++) {
      if (i > 1) await release(`svc-${i}`);
      weeks.push(await runWeek(`svc-${i}`));
    }
    const stableP50 = median(weeks.map((w) => w.p50).filter((x): x is number => x !== null));
    const waitUs = ADDED_WAIT_US || Math.max(1, Math.round(stableP50 * 1000 * 0.1));
    for (let j = 1; j <= SLOW; j++) {
      const build = `svc-${STABLE + j}-slow`;
      await release(build, { HC_ADDED_WAIT_US: String(waitUs) });
      weeks.push(await runWeek(build));
    }
    await rig(['schedule', 'delete', 'weekly'], childEnv);

    const slowP50 = median(weeks.slice(STABLE).map((w) => w.p50).filter((x): x is number => x !== null));
    const rows = weeks.map((w, i) => {
      const firstRun = w.alert?.changes.filter((c) => c.kind === 'first-run').map((c) => c.figure).join(', ') || '-';
      const late = w.alert?.changes.filter((c) => c.kind !== 'first-run').map((c) => `${c.figure} from ${c.run}`).join(', ') || '-';
      return [String(i + 1), w.build, w.status, w.p50?.toFixed(3) ?? '-', w.p99?.toFixed(2) ?? '-', i < 6 ? 'not judged (< 6 earlier runs)' : w.regressed ?? '-', firstRun, late];
    });
    const head = ['week', 'build', 'status', 'p50 ms', 'p99 ms', 'RigRegressed', 'first-run step on', 'change points alerted'];
    const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
    const line = (r: string[]) => '| ' + r.map((x, c) => x.padEnd(widths[c])).join(' | ') + ' |';
    console.log(line(head));
    console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
    for (const r of rows) console.log(line(r));
    const judgedStable = weeks.slice(6, STABLE);
    console.log('');
    console.log(`stable weeks' p50 median ${stableP50.toFixed(3)} ms; slowed weeks' ${slowP50.toFixed(3)} ms (${(((slowP50 - stableP50) / stableP50) * 100).toFixed(1)} %), HC_ADDED_WAIT_US=${waitUs}`);
    console.log(`judged stable weeks alerting: ${judgedStable.filter((w) => w.regressed === 'yes').length} of ${judgedStable.length}; first slow week RigRegressed: ${weeks[STABLE]?.regressed ?? '-'}`);
    console.log(`${weeks.length} weeks of ${SECONDS} s at ${RATE} requests/s, each after a restart of the service; load1 now ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPUs; ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    if (svc) await undeploy(svc.child).catch(() => undefined);
    workers.forEach((w) => {
      if (w.getState() === 'RUNNING') w.shutdown();
    });
    await running.catch(() => undefined);
    await connection.close().catch(() => undefined);
    await server.close().catch(() => undefined);
    await cluster.destroy().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
