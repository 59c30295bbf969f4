// test-mode: unit
// The report step's history alert (lib/evidence/history-alert.ts) run by run over evidence folders, as
// activities/finish.ts runs it (each run's history-alert.json written before the next run reads it),
// and `rig history ack` (issue 45 items 3 and 4). The folders hold what the alert reads: result.json
// (each repeat's p50), rig.json, spec.json; seeded series whose truth is known:
//   - late: 20 stable runs, then p50 7 % higher (2 % noise): too small for the first-run test, and
//     E-divisive first finds it at run 30, 9 runs after it began at run 21. It alerts there, once;
//   - clean: 20 stable runs, then p50 10 % higher (1 % noise): the first slow run alerts, and the change
//     point found a few runs later is that change, not a second alert.
// An acknowledged change never alerts; a spec's floor above a change silences it; the ack's refusals
// name the fix.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { historyAlert, type HistoryAlert } from '../../lib/evidence/history-alert';
import { HISTORY_ALERT_FILE } from '../../lib/evidence/layout';
import { listEvidenceFiles } from '../../lib/evidence/manifest';
import { captureRig } from '../harness/capture-cli';
import { normal } from '../protocol/change-point-series';

let tmp: string;
const saved = process.env.RIG_RESULTS;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-history-late-'));
});
after(() => {
  if (saved === undefined) delete process.env.RIG_RESULTS;
  else process.env.RIG_RESULTS = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

const runId = (name: string, i: number) => `${name}-run-${String(i).padStart(2, '0')}`;

/** Per run, its three repeats' p50 (ms): a level with a run-wide shift and each repeat's own noise. */
function p50Repeats(seed: number, runs: number, stepPct: number, runSd: number, repeatSd: number): number[][] {
  const z = normal(seed);
  return Array.from({ length: runs }, (_, i) => {
    const level = 2 * (1 + (i >= 20 ? stepPct / 100 : 0));
    const shift = runSd * z();
    return [0, 1, 2].map(() => level * (1 + shift + repeatSd * z()));
  });
}
/** The late series: its change point is first found at run 30 (seed chosen for it, and asserted below). */
const LATE = p50Repeats(63, 32, 7, 0.015, 0.02);
/** The clean series: 10 % in about 1 % noise. */
const CLEAN = p50Repeats(64, 30, 10, 0.005, 0.01);

/** Writes the folders of `name`'s runs under a fresh results folder. */
function writeRuns(name: string, reps: number[][], spec: Record<string, unknown> = {}): string {
  const root = fs.mkdtempSync(path.join(tmp, `${name}-`));
  reps.forEach((r, k) => {
    const i = k + 1;
    const dir = path.join(root, runId(name, i));
    fs.mkdirSync(dir);
    const started = new Date(Date.UTC(2026, 0, 5 + 7 * k, 3)).toISOString();
    const result = {
      campaignId: runId(name, i),
      name,
      status: 'held',
      target: 'local',
      steps: [{ step: 'provision', startedAt: started }],
      configurations: [{ name: 'only', eventsPerSecond: 200, batch: 1, passed: 3, total: 3 }],
      repeats: r.map((p50, j) => ({ kind: 'sustained', configuration: 'only', passed: true, p50Ms: p50, p99Ms: null, worst10sP99Ms: null, dir: `repeats/only/r${j + 1}-a1` })),
    };
    fs.writeFileSync(path.join(dir, 'result.json'), JSON.stringify(result));
    fs.writeFileSync(path.join(dir, 'rig.json'), JSON.stringify({ hardware: 'test machine', serviceBuild: `image svc:b${i}` }));
    fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ name, target: 'local', ...spec }));
  });
  return root;
}

/** The report step over every run in order: each alert judged, then written into its run's folder. */
function reportEach(root: string, name: string, runs: number): Array<{ run: number; alert: HistoryAlert | null }> {
  const out: Array<{ run: number; alert: HistoryAlert | null }> = [];
  for (let i = 1; i <= runs; i++) {
    const dir = path.join(root, runId(name, i));
    const alert = historyAlert(dir);
    if (alert) fs.writeFileSync(path.join(dir, HISTORY_ALERT_FILE), JSON.stringify(alert, null, 2) + '\n');
    out.push({ run: i, alert });
  }
  return out;
}
const alerting = (r: Array<{ run: number; alert: HistoryAlert | null }>) => r.filter((x) => x.alert?.regressed).map((x) => x.run);

test('a change found 9 runs after it began still alerts, once, naming the run where it began; the runs after it do not alert it again', () => {
  const root = writeRuns('late', LATE);
  const runs = reportEach(root, 'late', LATE.length);
  assert.deepEqual(alerting(runs), [30], runs.map((r) => `${r.run}: ${r.alert?.summary ?? 'no history'}`).join('\n'));
  const alert = runs[29].alert!;
  assert.deepEqual(alert.changes.map((c) => [c.kind, c.figure, c.run, c.build, c.previousBuild]), [['change-point', 'p50_ms', runId('late', 21), 'image svc:b21', 'image svc:b20']]);
  assert.match(alert.summary, new RegExp(`only \\(200 ev/s, batch 1\\) p50_ms worse at ${runId('late', 21)} \\(build image svc:b21, after image svc:b20, \\+\\d+\\.\\d %, change point, p = 0\\.0\\d+\\)`));
  // Found late: the history up to run 29 had no change point, and the one it finds lies 9 runs back.
  const s = alert.series!.find((x) => x.series.startsWith('only'))!;
  assert.deepEqual(s.changePoints.filter((c) => c.figure === 'p50_ms').map((c) => c.row), [20]);
  assert.equal(runs[28].alert!.series!.find((x) => x.series.startsWith('only'))!.changePoints.filter((c) => c.figure === 'p50_ms').length, 0);
});

test('a step the first run shows alerts on that run; the change point found a few runs later is the same change and does not alert again', () => {
  const root = writeRuns('clean', CLEAN);
  const runs = reportEach(root, 'clean', CLEAN.length);
  assert.deepEqual(alerting(runs), [21], runs.map((r) => `${r.run}: ${r.alert?.summary ?? 'no history'}`).join('\n'));
  assert.deepEqual(runs[20].alert!.changes.map((c) => [c.kind, c.figure, c.run, c.previousBuild]), [['first-run', 'p50_ms', runId('clean', 21), 'image svc:b20']]);
  // The change point is there by the last run, placed a run early (at run 20, the highest of the stable
  // runs: on ranks either split scores alike), within 3 runs of the first-run alert: the same change.
  const last = runs[CLEAN.length - 1].alert!;
  assert.deepEqual(last.series!.find((x) => x.series.startsWith('only'))!.changePoints.filter((c) => c.figure === 'p50_ms').map((c) => [c.row, c.verdict]), [[19, 'worse']]);
});

test("a spec's floor above a change silences it, both kinds", () => {
  const root = writeRuns('floored', CLEAN, { history: { floors: { p50_ms: 12 } } });
  const runs = reportEach(root, 'floored', CLEAN.length);
  assert.deepEqual(alerting(runs), [], runs.map((r) => `${r.run}: ${r.alert?.summary ?? 'no history'}`).join('\n'));
  assert.equal(runs[20].alert!.floors_pct!.p50_ms, 12);
  // The change is still in the history, drawn and listed.
  assert.equal(runs[CLEAN.length - 1].alert!.series!.find((x) => x.series.startsWith('only'))!.changePoints.filter((c) => c.figure === 'p50_ms').length, 1);
  // rig history shows the floor each figure is held to.
  process.env.RIG_RESULTS = root;
  return captureRig(['history', 'floored', '--evidence-only']).then((h) => {
    assert.equal(h.code, 0, h.err);
    assert.match(h.out, /\n {2}floor {2}.*none {4}12 % {4}20 % {4}30 % +3 %\n/);
  });
});

test('an acknowledged change stops alerting: rig history ack RUN FIGURE, recorded in the run’s folder, read without Temporal', async () => {
  const root = writeRuns('acked', LATE);
  process.env.RIG_RESULTS = root;
  const ack = await captureRig(['history', 'ack', runId('acked', 22), 'p50_ms', '--reason', 'the audit log: accepted']);
  assert.equal(ack.code, 0, ack.err);
  assert.match(ack.out, new RegExp(`acknowledged: p50_ms at ${runId('acked', 22)} in every series of the run \\(only \\(200 ev/s, batch 1\\)\\)`));
  const file = JSON.parse(fs.readFileSync(path.join(root, runId('acked', 22), 'history-acks.json'), 'utf8')) as { acks: Array<{ figure: string; series: string | null; by: string; at: string; reason: string }> };
  assert.equal(file.acks.length, 1);
  assert.deepEqual([file.acks[0].figure, file.acks[0].series, file.acks[0].reason], ['p50_ms', null, 'the audit log: accepted']);
  assert.ok(file.acks[0].by.length > 0 && !Number.isNaN(Date.parse(file.acks[0].at)));
  // A person's note after the seal: never in the manifest (a sealed folder stays whole).
  assert.ok(!listEvidenceFiles(path.join(root, runId('acked', 22))).includes('history-acks.json'));
  // Again: kept once.
  const again = await captureRig(['history', 'ack', runId('acked', 22), 'p50_ms']);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /^already acknowledged: p50_ms/);
  // The change (at run 21, within 3 runs of the ack) never alerts.
  const runs = reportEach(root, 'acked', LATE.length);
  assert.deepEqual(alerting(runs), [], runs.map((r) => `${r.run}: ${r.alert?.summary ?? 'no history'}`).join('\n'));
  assert.equal(runs[29].alert!.acks!.length, 1);
  // rig history lists it under its series.
  const h = await captureRig(['history', 'acked', '--evidence-only']);
  assert.equal(h.code, 0, h.err);
  assert.match(h.out, new RegExp(`acknowledged \\(no longer alert\\):\\n {4}p50 at ${runId('acked', 22)}, by .+ at .+: the audit log: accepted`));
  const json = JSON.parse((await captureRig(['history', 'acked', '--evidence-only', '-o', 'json'])).out) as { acks: unknown[]; floors_pct: Record<string, number | null> };
  assert.equal(json.acks.length, 1);
  assert.equal(json.floors_pct.p50_ms, 5);
});

test("rig history ack's refusals name the fix", async () => {
  const root = writeRuns('refused', LATE.slice(0, 6));
  process.env.RIG_RESULTS = root;
  const run = runId('refused', 3);
  const cases: Array<[string[], number, RegExp]> = [
    [['nosuch-run', 'p50_ms'], 1, new RegExp(`no campaign 'nosuch-run' with a result in ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(give a run id as \`rig history NAME\` lists it in its run column`)],
    [[run, 'p51'], 2, /unknown figure 'p51': one of p50_ms, p99_ms, worst_10s_p99_ms, pass_share, wal_bytes_per_event, ceiling_evps, ceiling_share/],
    [[run, 'p50_ms', '--series', 'other'], 2, /unknown series 'other' for p50_ms in run refused-run-03: one of "only \(200 ev\/s, batch 1\)"/],
    [[run, 'p99_ms'], 2, /run refused-run-03 has no value of p99_ms \(its series: only \(200 ev\/s, batch 1\)\): name a figure it measured/],
    [[run], 2, /rig history ack takes a run and a figure: rig history ack RUN FIGURE/],
    [[run, 'p50_ms', '--reason', ' '], 2, /--reason needs words/],
    [[run, 'p50_ms', '-o', 'json'], 2, /rig history ack takes --series and --reason only/],
  ];
  for (const [args, code, message] of cases) {
    const r = await captureRig(['history', 'ack', ...args]);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.out} ${r.err}`);
    assert.match(r.err, message, args.join(' '));
  }
  const stray = await captureRig(['history', 'refused', '--reason', 'x']);
  assert.equal(stray.code, 2);
  assert.match(stray.err, /--series and --reason go with rig history ack RUN FIGURE/);
  // Nothing was written by a refusal.
  assert.ok(!fs.readdirSync(root).some((d) => fs.existsSync(path.join(root, d, 'history-acks.json'))));
  // `rig history ack` alone is still the history of a spec named ack.
  const alone = await captureRig(['history', 'ack', '--evidence-only']);
  assert.equal(alone.code, 1);
  assert.match(alone.err, /no run of 'ack'/);
  const help = await captureRig(['history', '--help']);
  assert.match(help.out, /rig history ack RUN FIGURE \[--series SERIES\] \[--reason TEXT\]/);
});
