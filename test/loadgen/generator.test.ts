// test-mode: alone
// The generator against the calibration server: the schedule, the stream, the counts, the probe,
// closed loop, drops, and stopping (signal, parent gone). Behaviour and counts, never timing limits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { runLoad, type ProgressLine } from '../../lib/loadgen/run-load';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { SCENARIOS, STATUS_DROPPED } from '../../lib/protocol/sample-row';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-gen-test-'));
const customers = ['cus_1', 'cus_2', 'cus_3'];
let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'k', customers });
  url = await server.start();
});
after(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('open loop: the n-th request is intended at n x interval; every request is a row; counts reconcile', async () => {
  server.configure({ serviceMs: 1 });
  const progress: ProgressLine[] = [];
  const res = await runLoad({ url, apiKey: 'k', rate: 1500, batch: 5, seconds: 3, out: path.join(dir, 'open.csv.gz'), runTag: 'open-1', warmupSeconds: 0 }, (p) => progress.push(p));
  const s = res.summary;
  assert.equal(res.interrupted, false);
  assert.deepEqual([s.scheduled, s.offered, s.rows], [900, 900, 900]);
  assert.equal(s.sent + s.dropped, s.offered);
  const c = await readSampleFile(res.stream);
  assert.equal(c.length, 900);
  // the schedule: exactly floor(n * 1e6 / 300) for n = 0..899, whatever happened to each request
  const intended = [...c.intended.subarray(0, c.length)].sort((a, b) => a - b);
  assert.deepEqual(intended, Array.from({ length: 900 }, (_, n) => Math.floor((n * 1e6) / 300)));
  for (let i = 0; i < c.length; i++) {
    if (c.status[i] !== STATUS_DROPPED) assert.ok(c.sent[i] >= c.intended[i] && c.done[i] >= c.sent[i]);
    assert.equal(c.events[i], 5);
  }
  // the server counted exactly what the stream claims, under this run tag, with no duplicate key
  const t = server.tally('open-1');
  const { analysis } = await analyzeFile(res.stream, { durationS: 3 });
  assert.equal(t.requests, s.sent);
  assert.equal(t.duplicates, 0);
  assert.equal(t.rows, analysis.ingest.events_claimed);
  assert.equal(t.quantity, analysis.ingest.quantity_claimed);
  assert.equal(t.quantity, s.quantity_ok);
  // one progress line a second, with that second's counts
  assert.ok(progress.length >= 2, `progress lines: ${progress.length}`);
  assert.deepEqual(Object.keys(progress[0]).sort(), ['done', 'dropped', 'failed', 'in_flight', 'offered', 'p99_ms', 'probe', 'second', 'sent', 'type']);
  assert.equal(progress[0].second, 1);
});

test('the probe runs on its own schedule, cycles its three endpoints and is never pooled into ingest', async () => {
  server.configure({ serviceMs: 1 });
  const res = await runLoad({ url, apiKey: 'k', rate: 200, batch: 1, seconds: 3, probeRate: 6, out: path.join(dir, 'probe.csv.gz'), warmupSeconds: 0 });
  const c = await readSampleFile(res.stream);
  const names = [];
  for (let i = 0; i < c.length; i++) if (c.scenario[i] !== 0) names.push([c.intended[i], SCENARIOS[c.scenario[i]]] as const);
  names.sort((a, b) => a[0] - b[0]);
  assert.equal(names.length, 18);
  assert.deepEqual(names.slice(0, 6).map((n) => n[1]), ['probe:aggregate', 'probe:invoices', 'probe:customers', 'probe:aggregate', 'probe:invoices', 'probe:customers']);
  const { analysis } = await analyzeFile(res.stream);
  assert.equal(analysis.ingest.offered, 600);
  assert.deepEqual(analysis.probe.map((p) => [p.scenario, p.offered, p.failed]), [
    ['probe:aggregate', 6, 0],
    ['probe:invoices', 6, 0],
    ['probe:customers', 6, 0],
  ]);
  assert.deepEqual(res.summary.probe, { offered: 18, sent: 18, ok: 18, failed: 0, dropped: 0 });
});

test('a request due with every slot busy is dropped: never sent, a -1 row with empty times', async () => {
  server.configure({ serviceMs: 100 });
  const res = await runLoad({ url, apiKey: 'k', rate: 100, batch: 2, seconds: 2, maxInFlight: 2, out: path.join(dir, 'drops.csv.gz'), runTag: 'drops-1', warmupSeconds: 0 });
  const { analysis } = await analyzeFile(res.stream);
  const i = analysis.ingest;
  assert.ok(i.dropped > 0, 'drops');
  assert.equal(i.offered, 100);
  assert.equal(i.sent + i.dropped, i.offered);
  assert.equal(server.tally('drops-1').requests, i.sent, 'dropped requests never reached the server');
  assert.equal(res.summary.dropped, i.dropped);
  const c = await readSampleFile(res.stream);
  for (let k = 0; k < c.length; k++) if (c.status[k] === STATUS_DROPPED) assert.ok(Number.isNaN(c.sent[k]) && Number.isNaN(c.done[k]) && c.events[k] === 2 && c.quantity[k] === 0);
});

test('500s are failures, counted exactly', async () => {
  server.configure({ serviceMs: 1, failEvery: 10 });
  const res = await runLoad({ url, apiKey: 'k', rate: 100, batch: 1, seconds: 2, out: path.join(dir, 'fail.csv.gz'), runTag: 'fail-1', warmupSeconds: 0 });
  const { analysis } = await analyzeFile(res.stream);
  assert.equal(analysis.ingest.failed, server.tally('fail-1').answered500);
  assert.equal(analysis.ingest.failed, 20);
  assert.equal(res.summary.failed, 20);
});

test('a connection the server drops is a transport error: status 0, counted as failed', async () => {
  const rude = net.createServer((sock) => sock.destroy());
  await new Promise<void>((r) => rude.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (rude.address() as net.AddressInfo).port;
    const res = await runLoad(
      { url: `http://127.0.0.1:${port}`, apiKey: 'k', rate: 50, batch: 1, seconds: 1, customers, out: path.join(dir, 'rude.csv.gz'), warmupSeconds: 0, warmConnections: 1 },
      undefined,
      { preflight: false },
    );
    const c = await readSampleFile(res.stream);
    assert.equal(c.length, 50);
    for (let i = 0; i < c.length; i++) assert.ok(c.status[i] === 0 || c.status[i] === STATUS_DROPPED);
    const { analysis } = await analyzeFile(res.stream);
    assert.equal(analysis.ingest.failed, analysis.ingest.sent);
    assert.ok(analysis.ingest.failed > 0);
  } finally {
    rude.close();
  }
});

test('a server that starts refusing connections mid-run: the stream is valid and the repeat fails on `failed`', async () => {
  // Its own server, stopped one second in: open connections are cut, new ones refused, so later
  // requests fail before they are ever written (the path where `sent` is set at completion).
  const doomed = new CalibrationServer({ apiKey: 'k', customers });
  const doomedUrl = await doomed.start();
  doomed.configure({ serviceMs: 1 });
  let stopped: Promise<void> | undefined;
  try {
    const res = await runLoad(
      { url: doomedUrl, apiKey: 'k', rate: 300, batch: 1, seconds: 3, out: path.join(dir, 'refused.csv.gz'), runTag: 'refused-1', warmupSeconds: 0 },
      (p) => {
        if (p.second === 1) stopped ??= doomed.stop();
      },
    );
    await stopped;
    const c = await readSampleFile(res.stream); // throws if any row has done_us before sent_us
    assert.equal(c.length, 900);
    for (let i = 0; i < c.length; i++) if (c.status[i] !== STATUS_DROPPED) assert.ok(c.done[i] >= c.sent[i], `row ${i}`);
    const { analysis } = await analyzeFile(res.stream, { durationS: 3 });
    assert.ok(analysis.ingest.failed > 0, 'requests after the stop failed');
    const t = doomed.tally('refused-1');
    const { verdict } = evaluateRun(analysis, { p99LimitMs: 1000, reconciliation: { rows_written: t.rows, quantity_gained: t.quantity } });
    assert.equal(verdict.passed, false);
    assert.ok(verdict.ingest.reasons.some((r) => r.startsWith('failed: ')), verdict.ingest.reasons.join('; '));
  } finally {
    await (stopped ?? doomed.stop());
  }
});

test('closed loop: V workers, each request issued when the previous reply came', async () => {
  server.configure({ serviceMs: 2 });
  const res = await runLoad({ url, apiKey: 'k', mode: 'closed', workers: 4, batch: 3, seconds: 2, out: path.join(dir, 'closed.csv.gz'), runTag: 'closed-1', warmupSeconds: 0 });
  const c = await readSampleFile(res.stream);
  assert.ok(c.length > 100);
  for (let i = 0; i < c.length; i++) {
    assert.ok(c.sent[i] >= c.intended[i] && c.sent[i] - c.intended[i] < 1_000_000);
    assert.notEqual(c.status[i], STATUS_DROPPED);
  }
  assert.equal(res.summary.dropped, 0);
  assert.equal(server.tally('closed-1').requests, c.length);
});

test('cut short by the caller (SIGTERM): a valid stream, complete up to then, and it says so', async () => {
  server.configure({ serviceMs: 1 });
  const ac = new AbortController();
  const started = Date.now();
  const res = await runLoad(
    { url, apiKey: 'k', rate: 200, batch: 1, seconds: 60, out: path.join(dir, 'cut.csv.gz'), runTag: 'cut-1', warmupSeconds: 0 },
    (p) => {
      if (p.second === 1) ac.abort();
    },
    { signal: ac.signal },
  );
  assert.ok(Date.now() - started < 30_000, 'stopped long before its 60 s');
  assert.equal(res.interrupted, true);
  assert.equal(res.summary.reason, 'SIGTERM');
  const c = await readSampleFile(res.stream); // valid gzip, every line complete
  assert.equal(c.length, res.summary.offered);
  assert.ok(c.length > 100 && c.length < 12_000);
  assert.equal(server.tally('cut-1').requests, res.summary.sent);
});

test('SIGINT to the child: same, the stream is flushed and the summary says cut short', async () => {
  server.configure({ serviceMs: 1 });
  let childPid = 0;
  const res = await runLoad(
    { url, apiKey: 'k', rate: 200, batch: 1, seconds: 60, out: path.join(dir, 'sigint.csv.gz'), warmupSeconds: 0 },
    (p) => {
      if (p.second === 1) process.kill(childPid, 'SIGINT');
    },
    { onSpawn: (pid) => (childPid = pid) },
  );
  assert.equal(res.summary.reason, 'SIGINT');
  assert.equal((await readSampleFile(res.stream)).length, res.summary.offered);
});

test('the parent dies: the child stops offering load by itself and leaves a valid stream', async () => {
  server.configure({ serviceMs: 1 });
  const out = path.join(dir, 'orphan.csv.gz');
  const helper = path.join(__dirname, 'helpers', 'parent-of-load.ts');
  const parent = spawn(process.execPath, ['--import', 'tsx', helper, url, 'k', out, 'orphan-1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let child = 0;
  await new Promise<void>((resolve, reject) => {
    const rl = readline.createInterface({ input: parent.stdout });
    rl.on('line', (line) => {
      const m = JSON.parse(line) as { child?: number; progress?: number };
      if (m.child) child = m.child;
      if (m.progress) resolve();
    });
    parent.on('exit', () => reject(new Error('the parent exited early')));
  });
  assert.ok(child > 0 && alive(child));
  parent.kill('SIGKILL');
  const killedAt = Date.now();
  while (alive(child) && Date.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(child), false, 'the child is gone');
  // nothing more arrives at the server once it is gone
  const seen = server.tally('orphan-1').requests;
  assert.ok(seen > 0);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(server.tally('orphan-1').requests, seen);
  // it flushed what it had: a valid stream whose sent rows are exactly what the server saw
  const c = await readSampleFile(out);
  let sent = 0;
  for (let i = 0; i < c.length; i++) if (c.status[i] !== STATUS_DROPPED) sent++;
  assert.equal(sent, seen);
});
