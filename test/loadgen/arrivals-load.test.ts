// test-mode: alone
// Shaped arrivals sent for real (issue 35): the generator against the calibration server, its stream
// read back. A trace replayed at speed 2 offers each request at the trace's offset halved (within
// 1 ms; here to the µs), every one reaches the server, and the stream's plan carries the trace so the
// analysis counts delivery against it; a spike's requests are each at the spike schedule's time; and
// a load without arrivals writes the plan record it always has, to the byte. Behaviour, never timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, test } from 'node:test';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { runLoad } from '../../lib/loadgen/run-load';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { loadArrivals } from '../../lib/loadgen/trace-file';
import { arrivalSchedule } from '../../lib/protocol/arrivals';
import { INGEST } from '../../lib/protocol/sample-row';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-arrivals-test-'));
const customers = ['cus_1', 'cus_2'];
let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'k', customers });
  url = await server.start();
  server.configure({ serviceMs: 1 });
});
after(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const firstLine = (file: string) => zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').split('\n')[0];
const ingestIntended = async (file: string) => {
  const c = await readSampleFile(file);
  const out: number[] = [];
  for (let i = 0; i < c.length; i++) if (c.scenario[i] === INGEST) out.push(c.intended[i]);
  return out.sort((a, b) => a - b);
};

test('a trace replayed at speed 2: each request is intended at its offset halved, within 1 ms, and every one is sent and judged against the trace', async () => {
  // 400 offsets over 3 s of trace, uneven (bursts and pauses, two on one instant), in ms with decimals.
  const offsetsMs: number[] = [];
  for (let i = 0; i < 400; i++) offsetsMs.push(Math.round((i < 200 ? i * 2.5 : 500 + (i - 200) * 12.5) * 1000 + ((i * 37) % 1000)) / 1000);
  offsetsMs.push(offsetsMs[offsetsMs.length - 1]);
  const file = path.join(dir, 'trace.txt');
  fs.writeFileSync(file, `# a recorded trace, ms since its start\n${offsetsMs.join('\n')}\n`);
  const arrivals = loadArrivals({ arrivals: { shape: 'trace', file, format: 'offsets', speed: 2 } });
  const out = path.join(dir, 'trace.csv.gz');
  const res = await runLoad({ url, apiKey: 'k', rate: 500, batch: 5, seconds: 2, out, runTag: 'trace-2', customers, warmupSeconds: 0, arrivals }, undefined, { preflight: false });
  assert.equal(res.interrupted, false);
  assert.equal(res.summary.scheduled, offsetsMs.length);
  const intended = await ingestIntended(out);
  assert.equal(intended.length, offsetsMs.length, 'one row per request of the trace');
  for (let k = 0; k < intended.length; k++) {
    const want = (offsetsMs[k] * 1000) / 2;
    assert.ok(Math.abs(intended[k] - want) <= 1000, `request ${k}: intended ${intended[k]} µs, the trace at speed 2 says ${want} µs`);
  }
  assert.equal(server.tally('trace-2').requests, offsetsMs.length - res.summary.dropped, 'the server saw every request sent');
  // The stream carries the trace: read back alone, it is judged against it.
  assert.match(firstLine(out), /^#plan \{"v":2,.*"arrivals":\{"shape":"trace","speed":2,"gaps_us":\[0,\d+,\d+,/);
  const { analysis } = await analyzeFile(out);
  assert.equal(analysis.plan?.arrivals?.shape, 'trace');
  assert.equal(analysis.ingest.delivery?.scheduled, offsetsMs.length);
});

test('a spike: every request at the spike schedule\'s time, 5x the base rate inside it', async () => {
  const out = path.join(dir, 'spike.csv.gz');
  const spike = { shape: 'spike' as const, peak: 2500, at: 1, for: 1 };
  const res = await runLoad({ url, apiKey: 'k', rate: 500, batch: 5, seconds: 3, out, runTag: 'spike-1', customers, warmupSeconds: 0, arrivals: spike }, undefined, { preflight: false });
  assert.equal(res.interrupted, false);
  const s = arrivalSchedule({ rate: 500, batch: 5, seconds: 3, arrivals: spike });
  const intended = await ingestIntended(out);
  assert.deepEqual(intended, Array.from({ length: s.count }, (_, k) => s.at(k)));
  const perSecond = [0, 0, 0];
  for (const t of intended) perSecond[Math.floor(t / 1e6)]++;
  assert.deepEqual(perSecond, [100, 500, 100]);
  const { analysis } = await analyzeFile(out);
  assert.equal(analysis.ingest.delivery?.scheduled, 700);
});

test('without arrivals the stream\'s plan record is today\'s, to the byte', async () => {
  const out = path.join(dir, 'constant.csv.gz');
  await runLoad({ url, apiKey: 'k', rate: 500, batch: 5, seconds: 1, out, runTag: 'const-1', customers, warmupSeconds: 0, probeRate: 2 }, undefined, { preflight: false });
  // The record every stream has carried since issue 25, written out by hand.
  assert.equal(firstLine(out), '#plan {"v":1,"mode":"open","rate":500,"batch":5,"seconds":1,"probe_rate":2,"run_tag":"const-1"}');
  const intended = await ingestIntended(out);
  assert.deepEqual(intended, Array.from({ length: 100 }, (_, n) => Math.floor((n * 1e6) / 100)));
});
