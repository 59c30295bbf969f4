// The report on evidence from the real instrument: the project's load generator (a child process)
// against the calibration server (a server whose behaviour and storage are known exactly), with the
// real host sampler, written through the store the way activities/repeat.ts writes a repeat. The
// database side is the calibration server's exact tally of what it stored for each run tag.
//
// It shows that a stream as the generator really writes it (completion order, probe rows, its own
// flush points) re-derives to the verdict recorded beside it, and that an acknowledged-but-not-stored
// event makes the repeat "not published" on the page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { EvidenceStore } from '../../lib/evidence/store';
import { HOST_SAMPLES, LOAD, RECONCILE, SAMPLES, VERDICT, repeatDir } from '../../lib/evidence/layout';
import type { LoadFile, ReconcileFile } from '../../lib/evidence/records';
import { startHostSampler } from '../../lib/evidence/host-sampler';
import { buildReport, renderMarkdown, type ReportModel } from '../../lib/evidence/report';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { CalibrationServer, type Behaviour } from '../../lib/loadgen/calibration-server';
import { runLoad } from '../../lib/loadgen/run-load';
import { sustainedGate } from '../../lib/protocol/gates';
import { runReport } from '../../lib/protocol/run-report';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { probeVerdict, repeatVerdict } from '../../lib/protocol/verdicts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-real-stream-'));
const API_KEY = 'hc_test_calibration_key';
const customers = Array.from({ length: 20 }, (_, i) => `cus_${i}`);
const server = new CalibrationServer({ apiKey: API_KEY, customers });
let model: ReportModel;

after(async () => {
  await server.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

before(async () => {
  const url = await server.start();
  const spec = parseCampaignSpec({
    name: 'real-stream',
    target: 'local',
    calibrate: false,
    seed: { customers: 20, historyRows: 0 },
    sustained: {
      repeats: 2,
      repeatSeconds: 6,
      cooldownSeconds: 0,
      // Limits no machine's timing can cross: this test is about re-derivation and reconciliation.
      configurations: [{ name: 'steady', eventsPerSecond: 2000, batch: 5, p99LimitMs: 60_000 }],
      probe: { rate: 6, p99BudgetMs: 60_000 },
      driftLimit: 1000,
    },
    hardware: { description: 'the test machine, against the calibration server', costPerHour: 0 },
  });
  const store = EvidenceStore.forCampaign('real-stream', root);
  store.writeJson('spec.json', spec);
  const s = spec.sustained!;
  const c = s.configurations[0];
  // Repeat 2's server acknowledges every 500th event without storing it: a run that cannot be reconciled.
  const behaviours: Behaviour[] = [{ serviceMs: 2, probeMs: 3 }, { serviceMs: 2, probeMs: 3, skipStoreEvery: 500 }];
  for (let k = 1; k <= s.repeats; k++) {
    server.configure(behaviours[k - 1]);
    const dir = repeatDir(c.name, k, 1);
    const runTag = `real-stream.${c.name}.r${k}.a1`;
    const samplesTmp = store.tempPath(`${dir}/${SAMPLES}`);
    const hostTmp = store.tempPath(`${dir}/${HOST_SAMPLES}`);
    const host = startHostSampler({ file: hostTmp, intervalMs: 1000 });
    const startedAt = new Date().toISOString();
    const load = await runLoad(
      { url, apiKey: API_KEY, rate: c.eventsPerSecond, batch: c.batch, seconds: s.repeatSeconds, probeRate: s.probe.rate, customers, runTag, out: samplesTmp },
      undefined,
      { preflight: false },
    );
    await host.stop();
    store.commit(`${dir}/${HOST_SAMPLES}`, hostTmp);
    store.commit(`${dir}/${SAMPLES}`, samplesTmp);
    store.writeJson(`${dir}/${LOAD}`, {
      mode: 'open',
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      cut_short: load.interrupted,
      run_tag: runTag,
      rate: c.eventsPerSecond,
      batch: c.batch,
      seconds: s.repeatSeconds,
      offered: load.summary.offered,
      sent: load.summary.sent,
      dropped: load.summary.dropped,
    } satisfies LoadFile);
    const t = server.tally(runTag);
    const recon: ReconcileFile = { run_tag: runTag, rows_written: t.rows, quantity_gained: t.quantity };
    store.writeJson(`${dir}/${RECONCILE}`, recon);
    const { analysis } = await analyzeFile(store.path(`${dir}/${SAMPLES}`), { durationS: s.repeatSeconds });
    const gate = sustainedGate(analysis.ingest, { p99LimitMs: c.p99LimitMs, driftLimit: s.driftLimit, reconciliation: recon });
    store.writeJson(`${dir}/${VERDICT}`, runReport(analysis, repeatVerdict(gate, probeVerdict(analysis.probe, s.probe.p99BudgetMs), load.interrupted)));
    store.logVerdict({
      configuration: c.name, index: k, attempt: 1, runTag, kind: 'sustained', passed: gate.passed, reasons: gate.reasons, samples: analysis.ingest.samples, dropped: analysis.ingest.dropped,
      failed: analysis.ingest.failed, p50Ms: null, p99Ms: null, worst10sP99Ms: null, drift: null, deliveredRate: analysis.ingest.delivered_rate_evps, freezeSeconds: 0, windows: 0,
      reconciled: gate.reconciled, dir, cutShort: load.interrupted,
    });
  }
  await store.buildManifest();
  model = await buildReport(store.dir);
});

test('a real generator stream re-derives to its recorded verdict; an unstored event makes the repeat not published', () => {
  const steady = model.configurations[0];
  const [r1, r2] = steady.repeats;
  // Repeat 1: everything acknowledged was stored; its verdict re-derives exactly (else it would be
  // "not published: verdict.json records ...").
  assert.equal(r1.status, 'passed', r1.reasons.join('; '));
  assert.ok(r1.report!.samples >= 1000, `${r1.report!.samples} samples`);
  assert.deepEqual(Object.keys(r1.report!.probe.endpoints).sort(), ['probe:aggregate', 'probe:customers', 'probe:invoices']);
  assert.ok(r1.host && r1.host.rows >= 3, 'the host sampler rows are read');
  assert.equal(r1.db, null);
  // Repeat 2: the server acknowledged events it never stored.
  assert.equal(r2.status, 'not-published');
  assert.match(r2.reasons.join('; '), /not reconciled: rows written \d+ != events claimed \d+ \(missing \d+\)/);
  assert.equal(steady.summary.label, '1/2');
  assert.equal(steady.published, false);
  const md = renderMarkdown(model);
  assert.match(md, /\| steady: 2,000 ev\/s offered \| not published \|/);
  assert.match(md, /\| steady \| 1 passing repeat \| not sampled \| not sampled \| not sampled \| not sampled \| \d+ % \(max \d+ %\), iowait/);
  assert.match(md, /Campaign status: unknown \(no result\.json: the campaign did not finish\)/);
});
