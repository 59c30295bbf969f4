// test-mode: unit
// The app node's host samples (aws) are taken all campaign long; each repeat gets the rows whose
// interval overlaps its window, with the share of the window they cover, so a gap (a worker restart)
// shows on the page instead of reading as a quiet host. Pure functions, plus the sampler itself on
// this machine's /proc.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { APP_NODE_HOST_FILE } from '../../lib/evidence/layout';
import { ensureNodeHostSampler, nodeSamplesThrough, stopNodeHostSampler } from '../../lib/evidence/node-host-sampler';
import type { HostSampleRow } from '../../lib/evidence/records';
import { rowsInWindow, summarizeAppNode } from '../../lib/evidence/report/app-node';

const row = (t: string, busy: number, intervalMs = 5000): HostSampleRow =>
  ({ t, seq: 0, intervalMs, cpu: { us: busy, sy: 0, id: 100 - busy, wa: 0, st: 1 } }) as HostSampleRow;

test('a repeat gets the rows whose interval overlaps its window, and the share of the window they cover', () => {
  const rows = ['00:00:05', '00:00:10', '00:00:15', '00:00:20', '00:00:25'].map((t, i) => row(`2026-12-01T${t}.000Z`, 10 * (i + 1)));
  // Window 00:00:07 .. 00:00:18: rows ending at 10 (5-10), 15 (10-15) and 20 (15-20) overlap it.
  const inside = rowsInWindow(rows, '2026-12-01T00:00:07.000Z', '2026-12-01T00:00:18.000Z');
  assert.deepEqual(inside.map((r) => r.t.slice(11, 19)), ['00:00:10', '00:00:15', '00:00:20']);
  const s = summarizeAppNode(rows, '2026-12-01T00:00:07.000Z', '2026-12-01T00:00:18.000Z')!;
  assert.equal(s.rows, 3);
  assert.equal(s.coverage_pct, 100);
  assert.equal(s.cpu_busy_pct!.max, 40);
});

test('a gap in the app node\'s samples (its worker restarted) shows as coverage under 100 %, and a window with no row is null', () => {
  const rows = [row('2026-12-01T00:00:05.000Z', 10), row('2026-12-01T00:00:30.000Z', 10)];
  const s = summarizeAppNode(rows, '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:30.000Z')!;
  assert.equal(s.rows, 2);
  assert.equal(s.coverage_pct, 33.3); // 0-5 and 25-30 of 30 s
  assert.equal(summarizeAppNode(rows, '2026-12-01T00:01:00.000Z', '2026-12-01T00:01:30.000Z'), null);
  // A sampler error row counts as a row but covers nothing.
  const withError = [row('2026-12-01T00:00:05.000Z', 10), { t: '2026-12-01T00:00:10.000Z', seq: 2, error: 'EIO' } as HostSampleRow];
  const e = summarizeAppNode(withError, '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:10.000Z')!;
  assert.equal(e.errors, 1);
  assert.equal(e.coverage_pct, 50);
});

test('the node host sampler runs once per campaign in its process, writes hourly app-node files, and says when a row covers a given time', async () => {
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-app-node-'));
  const before = process.env.RIG_RESULTS;
  process.env.RIG_RESULTS = results;
  try {
    const first = ensureNodeHostSampler('app-node-test', 200);
    assert.equal(first.started, true);
    const again = ensureNodeHostSampler('app-node-test', 200);
    assert.deepEqual(again, { started: false, since: first.since }, 'a retried activity does not start a second sampler');
    assert.equal(await nodeSamplesThrough('app-node-test', Date.now(), 5000), true);
    assert.equal(await nodeSamplesThrough('not-running', Date.now(), 10), false);
    const samples = await stopNodeHostSampler('app-node-test');
    assert.ok(samples >= 1);
    const dir = path.join(results, 'app-node-test', 'app-node');
    const files = fs.readdirSync(dir).map((f) => `app-node/${f}`);
    assert.ok(files.length >= 1 && files.every((f) => APP_NODE_HOST_FILE.test(f)), files.join(', '));
    const rows = files.flatMap((f) => fs.readFileSync(path.join(results, 'app-node-test', f), 'utf8').trim().split('\n'));
    assert.equal(rows.length, samples);
  } finally {
    if (before === undefined) delete process.env.RIG_RESULTS;
    else process.env.RIG_RESULTS = before;
    fs.rmSync(results, { recursive: true, force: true });
  }
});
