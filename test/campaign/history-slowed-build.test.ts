// Issue 36's must-show on the local rig: a real schedule (`rig schedule create`, runs started by the
// schedule's trigger, as its weekly cron would) of a short campaign against a running deployment
// (target "existing": one PostgreSQL cluster and the reference service, started here, as a team's
// staging deployment is). After RUNS_BEFORE runs of build svc-1, the deployment is replaced by build
// svc-2-slow: the reference service with its HC_ADDED_DELAY_MS switch, a known added delay per
// request, on the same port. Every figure is the real service's, measured by the real generator; a
// week the loaded host stalls fails its gates and has no figure, as a real failed week (the schedule
// runs again until each build has its weeks).
//
// What must hold: the report step sets RigRegressed=yes on the first run of svc-2-slow with a figure
// (issue 45: the first-run step test, that run's p50 beyond the noise of the 6 runs before it;
// history-alert.json names it, svc-1 before and svc-2-slow after: the build each run's service
// reported of itself, since the in-process worker is unversioned and visibility names none); the runs
// after it do not alert the step again, up to the one whose history shows its change point (a
// permutation test needs runs on both sides: with a perfect step on ranks, 6 before and 6 after give
// p = 0.008, 6 and 5 only 0.023), which is the same change; and the history (`rig history weekly`,
// visibility and the evidence folders) shows that change point in p50 at the first slow run, worse,
// with a shift of the order of the added delay. One repeat a run: a pairwise comparison of 1 repeat a
// side earns no verdict on a figure (only a lost pass alerts it, as a failed week does), so on a week
// that passed, RigRegressed is the history's. About 12 runs of ~25 s: minutes, not seconds, the
// price of a real series.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import type { CampaignSpecInput } from '../../lib/protocol/spec';
import type { HistoryAlert } from '../../lib/evidence/history-alert';
import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../lib/tools/paths';
import { campaignEnv, waitFor } from '../harness/campaign';
import { hardcountDb } from '../harness/hardcount';
import { rig } from '../harness/rig-cli';

const dbReady = hardcountDb({ parameters: { autovacuum_naptime: '15s' } });

/** Runs of svc-1 with figures (passed) before the new build. */
const RUNS_BEFORE = 6;
/** At most this many runs of each build: a run the loaded host failed publishes no figure and is run again. */
const MAX_RUNS = 10;
/**
 * The slowed build's added delay per request (ms). Far above the service's own milliseconds, and above
 * what a loaded shared host adds to a run that still passes its 2-s p99 limit (a stalled run fails it
 * and publishes no figure): the step stands clear of the weeks' noise.
 */
const DELAY_MS = 1000;

/**
 * The deployment's service: reference/main.ts in a process of its own (as the local target runs it),
 * not in this one, whose event loop the worker and the generator share. Resolves once it listens.
 */
async function deploy(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('reference', 'main.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.on('exit', (code) => reject(new Error(`the reference service exited ${code} before listening`)));
  });
  const url = (JSON.parse(line) as { listening: string }).listening;
  return { child, url, port: Number(new URL(url).port) };
}

async function undeploy(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface HistoryJson {
  notes: string[];
  series: Array<{
    series: string;
    rows: Array<{ campaignId: string; build: string | null; figures: Record<string, number | null> }>;
    changePoints: Array<{ figure: string; row: number; run: string; build: string | null; previousBuild: string | null; verdict: string; pValue: number; shift: { shift: number } }>;
  }>;
}

test('a weekly schedule on a deployment whose build svc-2-slow adds 1 s a request: RigRegressed is set on its first run, the change point found later is not alerted again, and the history places it at that run', { timeout: 900_000 }, async () => {
  const db = await dbReady;
  let svc = await deploy({ HC_DATABASE_URL: db.appUrl, HC_BUILD: 'svc-1' });
  db.defer(() => undeploy(svc.child));
  process.env.RIG_TEST_HISTORY_DATABASE_URL = db.ownerUrl;
  const appFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rig-history-app-')), 'app-url');
  fs.writeFileSync(appFile, db.appUrl + '\n', { mode: 0o600 });

  const env = await campaignEnv();
  await env.inProcessWorker();
  const spec: CampaignSpecInput = {
    name: 'weekly-slowed',
    target: 'existing',
    calibrate: false,
    watchdogMinutes: 60,
    existing: { serviceUrl: svc.url, databaseUrlFrom: { env: 'RIG_TEST_HISTORY_DATABASE_URL' }, appDatabaseUrlFrom: { file: appFile } },
    seed: { customers: 5, historyRows: 0, settleTimeoutSeconds: 60, intoExisting: true },
    // 9 s at 200 req/s: thirds of 600 samples, whose p99 intervals are bounded, so drift is decided
    // (under a generous limit) and a run passes and publishes its figures unless the host stalls it.
    // 1,000 request slots: the slowed build holds 200 requests in flight a second each. No warm-up: the
    // deployment runs between the weeks, warm.
    sustained: { repeats: 1, repeatSeconds: 9, cooldownSeconds: 0, warmupSeconds: 0, driftLimit: 100, maxInFlight: 1000, configurations: [{ name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 2000 }] },
  };
  const specFile = path.join(env.dir, 'weekly.json');
  fs.writeFileSync(specFile, JSON.stringify(spec));
  const created = await rig(['schedule', 'create', 'weekly', specFile, '--cron', '0 3 * * 1'], env.childEnv);
  assert.equal(created.code, 0, created.stderr);
  const schedule = env.client.schedule.getHandle('weekly');

  const runs: Array<{ id: string; result: CampaignResult; regressed: string | undefined; alert: HistoryAlert | null; passed: boolean }> = [];
  const runOnce = async () => {
    const seen = new Set(runs.map((r) => r.id));
    await schedule.trigger();
    const id = await waitFor('the scheduled run', async () => {
      for await (const wf of env.client.workflow.list({ query: `WorkflowType = 'benchCampaign' AND TemporalScheduledById = 'weekly'` })) if (!seen.has(wf.workflowId)) return wf.workflowId;
      return undefined;
    }, 60_000, 250);
    const handle = env.client.workflow.getHandle(id);
    const result = (await handle.result()) as CampaignResult;
    // A campaign that ran to its end; its one repeat passes unless the loaded host stalled it (then it
    // publishes no figure, as any failed week: the series skips it).
    assert.ok(['uncalibrated', 'failed'].includes(result.status) && !result.error, `${id}: ${result.status} ${result.error ?? ''}`);
    // (A repeat invalid on the host's account is run again: any counted repeat that passed gives the week its figure.)
    const passed = result.repeats.some((r) => r.kind === 'sustained' && r.passed);
    if (!passed) console.error(`note: ${id} did not pass (${result.repeats.map((r) => r.reasons.join('; ')).join(' | ')}): no figure this week`);
    const regressed = ((await handle.describe()).searchAttributes?.RigRegressed as string[] | undefined)?.[0];
    const alertFile = path.join(result.resultsDir, 'history-alert.json');
    const alert = fs.existsSync(alertFile) ? (JSON.parse(fs.readFileSync(alertFile, 'utf8')) as HistoryAlert) : null;
    runs.push({ id, result, regressed, alert, passed });
    return runs[runs.length - 1];
  };

  while (runs.filter((r) => r.passed).length < RUNS_BEFORE) {
    assert.ok(runs.length < MAX_RUNS, `${RUNS_BEFORE} passing runs of svc-1 within ${MAX_RUNS}`);
    await runOnce();
  }
  const before = runs.length;
  // The new build is deployed: the same service on the same port, now with its added delay.
  await undeploy(svc.child);
  svc = await deploy({ HC_DATABASE_URL: db.appUrl, HC_PORT: String(svc.port), HC_BUILD: 'svc-2-slow', HC_ADDED_DELAY_MS: String(DELAY_MS) });
  const slowedStep = (r: (typeof runs)[number]) => r.alert?.changes.some((c) => c.figure === 'p50_ms' && c.build === 'svc-2-slow' && c.previousBuild === 'svc-1');
  for (;;) {
    assert.ok(runs.length - before < MAX_RUNS, `the step alerted within ${MAX_RUNS} runs of svc-2-slow: ${JSON.stringify(runs.map((r) => [r.regressed, r.alert?.summary]))}`);
    if (slowedStep(await runOnce())) break;
  }
  const alerted = runs.length - 1;
  // On until the history shows the step as a change point: those runs do not alert it again.
  const showsChangePoint = (r: (typeof runs)[number]) => r.alert?.series?.find((x) => x.series.startsWith('single'))?.changePoints.some((c) => c.figure === 'p50_ms');
  while (!showsChangePoint(runs[runs.length - 1])) {
    assert.ok(runs.length - before < 2 * MAX_RUNS, `the history showed the change point within ${2 * MAX_RUNS} runs of svc-2-slow: ${JSON.stringify(runs.map((r) => [r.regressed, r.alert?.summary]))}`);
    await runOnce();
  }

  const folder = (i: number) => path.basename(runs[i].result.resultsDir);
  // The first run of the new build that has a figure: where the step is.
  const firstSlowIndex = runs.findIndex((r, i) => i >= before && r.passed);
  const firstSlow = folder(firstSlowIndex);
  // It alerted on that very run: the first-run step test.
  assert.equal(alerted, firstSlowIndex, runs[alerted].alert!.summary);
  // The history, as a reader asks for it: the schedule's runs from visibility, the figures from the folders.
  const out = await rig(['history', 'weekly', '-o', 'json'], env.childEnv);
  assert.equal(out.code, 0, out.stderr);
  const h = JSON.parse(out.stdout) as HistoryJson;
  assert.ok(h.notes.some((n) => new RegExp(`: ${runs.length} run\\(s\\) of schedule weekly$`).test(n)), h.notes.join('\n'));
  const s = h.series.find((x) => x.series.startsWith('single'))!;
  assert.deepEqual(s.rows.map((r) => r.campaignId), runs.map((_, i) => folder(i)));
  // Each run names the build its service reported, though the worker is unversioned.
  assert.deepEqual(s.rows.map((r) => r.build), runs.map((_, i) => (i < before ? 'svc-1' : 'svc-2-slow')));
  // p50: every request waited DELAY_MS more (p99 also moved, but a noisy week's p99 may reach as high).
  for (const figure of ['p50_ms']) {
    const c = s.changePoints.filter((x) => x.figure === figure);
    assert.equal(c.length, 1, `${figure}: one change point: ${JSON.stringify(s.changePoints)}`);
    assert.deepEqual([c[0].row, c[0].run, c[0].previousBuild, c[0].build, c[0].verdict], [firstSlowIndex, firstSlow, 'svc-1', 'svc-2-slow', 'worse'], figure);
    assert.ok(c[0].pValue <= 0.01, `${figure} p = ${c[0].pValue}`);
    // Every request waited DELAY_MS more: the weeks' medians moved by about that much (less what the
    // loaded host added to the earlier weeks).
    assert.ok(c[0].shift.shift >= DELAY_MS * 0.5, `${figure} shift ${c[0].shift.shift} ms, the build added ${DELAY_MS} ms`);
  }

  // RigRegressed: set (yes) on the first slow run, with history-alert.json naming it.
  const last = runs[alerted];
  assert.ok(last.alert!.changes.some((c) => c.figure === 'p50_ms' && c.run === firstSlow && c.kind === 'first-run'), last.alert!.summary);
  assert.equal(last.regressed, 'yes');
  assert.ok(last.alert!.regressed);
  const change = last.alert!.changes.find((c) => c.figure === 'p50_ms')!;
  assert.deepEqual([change.build, change.previousBuild], ['svc-2-slow', 'svc-1']);
  const log = fs.readFileSync(path.join(last.result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, new RegExp(`p50_ms worse at ${firstSlow} \\(build svc-2-slow, after svc-1, \\+\\d`));
  // A slowed run before it (one the host failed: no figure) alerted nothing in p50; the runs after it,
  // to the one whose history found the change point, did not alert the step again.
  for (const r of [...runs.slice(before, alerted), ...runs.slice(alerted + 1)]) assert.ok(!r.alert?.changes.some((c) => c.figure === 'p50_ms'), `${r.id}: ${r.alert?.summary}`);

  // What the weeks were, for whoever reads the log.
  for (const [i, r] of runs.entries()) console.log(`week ${i + 1}: ${s.rows[i].build} p50 ${s.rows[i].figures.p50_ms ?? '-'} ms, p99 ${s.rows[i].figures.p99_ms ?? '-'} ms, RigRegressed ${r.regressed ?? '-'}`);
  await rig(['schedule', 'delete', 'weekly'], env.childEnv);
});
