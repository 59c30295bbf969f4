// `rig measure`'s refusals and `rig analyze` of a stream the test writes, as a user runs them. Nothing
// here judges this host's timing (no verdict depends on an on-time generator), so the file runs beside
// others; the measured runs whose verdicts do are in test/loadgen/cli.test.ts (alone).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import zlib from 'node:zlib';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { SAMPLE_HEADER } from '../../lib/protocol/sample-row';
import { freePort } from '../../lib/tools/free-port';
import { rig as runRig } from '../harness/rig-cli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-cli-refusals-'));
let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'cli-key', customers: ['cus_1', 'cus_2'] });
  url = await server.start();
});
after(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** `rig ARGS` as a user runs it (test/harness/rig-cli.ts), with the calibration server's key unless another is given. */
async function rig(args: string[], o: { key?: string } = {}): Promise<{ code: number | null; out: string; err: string }> {
  const r = await runRig(args, { RIG_API_KEY: o.key ?? 'cli-key' });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

const load = (out: string, extra: string[] = []) => ['measure', '--url', url, '--rate', '2500', '--batch', '5', '--seconds', '3', '--out', out, '--quiet', ...extra];

test('measure refuses bad input before any load, naming the field and the fix', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--rate', '0'], /rate \(--rate\) must be > 0 events per second/],
    [['--batch', '1001'], /batch \(--batch\) must be a whole number of events per request within 1\.\.1000, got 1001/],
    [['--seconds', '0.5'], /seconds \(--seconds\) must be at least 1 second/],
    [['--rate', 'fast'], /--rate must be a number, got 'fast'/],
    [['--reconcile', 'rows=1'], /--reconcile must be 'rows=N,quantity=Q'/],
  ];
  for (const [patch, re] of cases) {
    const args = load(path.join(dir, 'bad'), ['--run-tag', 'never-sent']);
    for (let i = 0; i < patch.length; i += 2) {
      const at = args.indexOf(patch[i]);
      if (at >= 0) args[at + 1] = patch[i + 1];
      else args.push(patch[i], patch[i + 1]);
    }
    const r = await rig(args);
    assert.equal(r.code, 2, `${patch.join(' ')}: ${r.err}`);
    assert.match(r.err, re);
  }
  const noOut = await rig(['measure', '--url', url, '--rate', '10', '--batch', '1', '--seconds', '1']);
  assert.equal(noOut.code, 2);
  assert.match(noOut.err, /--out DIR is required/);
  assert.equal(server.tally('never-sent').requests, 0, 'nothing was sent');
});

test('measure: a URL that does not answer, and a key that gets 401, are named by the pre-flight', async () => {
  const port = await freePort();
  const dead = await rig(['measure', '--url', `http://127.0.0.1:${port}`, '--rate', '100', '--batch', '1', '--seconds', '1', '--out', path.join(dir, 'dead')]);
  assert.equal(dead.code, 69, 'nothing answered');
  assert.match(dead.err, /--url http:\/\/127\.0\.0\.1:\d+ does not answer .*start the service, or fix --url/);
  const refused = await rig(load(path.join(dir, 'refused'), ['--run-tag', 'refused-1']), { key: 'wrong' });
  assert.equal(refused.code, 2);
  assert.match(refused.err, /RIG_API_KEY was refused \(GET \/v1\/customers answered 401\)/);
  assert.equal(server.tally('refused-1').requests, 0);
});

test('analyze: no threshold, no PASS (NOT JUDGED, exit 4); a directory or a fractional --seconds is a usage error (exit 2)', async () => {
  // a stream of its own, on time and fast, so only the missing threshold stands between it and a PASS
  let text = `${SAMPLE_HEADER}\n`;
  // 800 requests/s for 3 s: thirds of 800, enough to decide drift (lib/protocol/drift.ts)
  for (let i = 0; i < 2400; i++) text += `ingest,${i * 1250},${i * 1250},${i * 1250 + 2000 + (i % 7)},201,5,${5 + (i % 11)}\n`;
  const file = path.join(dir, 'no-threshold.csv.gz');
  fs.writeFileSync(file, zlib.gzipSync(text));
  const c = await readSampleFile(file);
  let quantity = 0;
  for (let i = 0; i < c.length; i++) quantity += c.quantity[i];
  // a foreign stream (no #plan of its own): its plan from the flags, 4,000 ev/s in its rows' batch of 5 for 3 s
  const planFlags = ['--rate', '4000', '--seconds', '3'];
  const nj = await rig(['analyze', file, ...planFlags, '--reconcile', `rows=12000,quantity=${quantity}`]);
  assert.equal(nj.code, 4, nj.out + nj.err);
  assert.match(nj.out, /\nNOT JUDGED \(no threshold\): every check that ran passed \(delivered, dropped, failed, rows, quantity, samples, drift, instrument\); not checked: threshold: .*\n$/);
  assert.doesNotMatch(nj.out, /^PASS/m);
  assert.match(nj.err, /give --p99-limit-ms MS/);
  const judged = await rig(['analyze', file, ...planFlags, '--reconcile', `rows=12000,quantity=${quantity}`, '--p99-limit-ms', '50']);
  assert.equal(judged.code, 0, judged.out + judged.err);
  // without its plan its delivery is not judged: NOT JUDGED (no plan), exit 4, never PASS
  const noPlan = await rig(['analyze', file, '--reconcile', `rows=12000,quantity=${quantity}`, '--p99-limit-ms', '50']);
  assert.equal(noPlan.code, 4, noPlan.out + noPlan.err);
  assert.match(noPlan.out, /\nNOT JUDGED \(no plan\): .*not checked: delivered: /);
  assert.match(noPlan.err, /give --rate R --seconds S/);
  // a plan the flags give wrongly (the stream is 800 requests/s, not 1,600): its seconds are short
  const wrong = await rig(['analyze', file, '--rate', '8000', '--seconds', '3', '--reconcile', `rows=12000,quantity=${quantity}`, '--p99-limit-ms', '50']);
  assert.equal(wrong.code, 99, wrong.out + wrong.err);
  assert.match(wrong.out, /not delivered: delivered 2400 of 4800 scheduled requests .*3 short seconds at 0-2/);
  // and one of a tenth of its rate (80 requests/s) does not PASS: its rows are off that plan's schedule,
  // refused as they would be under a plan of the stream's own (issue 34), never "delivered 264 of 240"
  const tenth = await rig(['analyze', file, '--rate', '400', '--seconds', '3', '--reconcile', `rows=12000,quantity=${quantity}`, '--p99-limit-ms', '50']);
  assert.equal(tenth.code, 2, tenth.out + tenth.err);
  assert.match(tenth.err, /line 3: ingest row intended at 1250 µs is not on the plan's schedule \(from the flags\)/);
  const noSeconds = await rig(['analyze', file, '--rate', '4000']);
  assert.equal(noSeconds.code, 2);
  assert.match(noSeconds.err, /--rate needs --seconds/);
  const asDir = await rig(['analyze', dir]);
  assert.equal(asDir.code, 2, asDir.err);
  assert.match(asDir.err, /is a directory/);
  const frac = await rig(['analyze', file, '--seconds', '30.5']);
  assert.equal(frac.code, 2, frac.err);
  assert.match(frac.err, /--seconds must be a whole number >= 1, got '30\.5'/);
  const help = await rig(['analyze', '--help']);
  assert.match(help.out + help.err, /4 NOT JUDGED/);
});
