// test-mode: unit
// The history's quiet p50 (lib/evidence/quiet-p50.ts), read from a repeat's own folder as the weekly
// alert reads it: a stream whose stolen seconds were made slow gives back the quiet seconds' known
// p50, the same figure the report's reader gives (lib/protocol/host-quiet.ts over the same rows); a
// folder without host samples, or with a stream it cannot read, has none (undefined), never an error.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { quietP50OfRepeat } from '../../lib/evidence/quiet-p50';

const T0 = Date.parse('2026-12-07T21:04:50.000Z');

/** A 30-s repeat folder at 10 requests/s; requests in seconds 10-19 (steal 9 % in their samples) take 9 ms, others 3 ms + k µs. */
function repeatFolder(opts: { host?: boolean; corrupt?: boolean } = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-quiet-p50-'));
  fs.writeFileSync(path.join(dir, 'load.json'), JSON.stringify({ started_at: new Date(T0).toISOString(), seconds: 30 }));
  const lines = ['#plan {"v":1,"mode":"open","rate":10,"batch":1,"seconds":30,"probe_rate":0,"run_tag":"t"}', 'scenario,intended_us,sent_us,done_us,status,events,quantity'];
  for (let s = 0; s < 30; s++) {
    for (let k = 0; k < 10; k++) {
      const t = s * 1e6 + k * 1e5;
      const lat = (s >= 10 && s < 20 ? 9000 : 3000) + k;
      lines.push(`ingest,${t},${t + 20},${t + 20 + lat},201,1,1`);
    }
  }
  const gz = zlib.gzipSync(lines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'samples.csv.gz'), opts.corrupt ? gz.subarray(0, gz.length - 20) : gz);
  if (opts.host !== false) {
    const steal = [0.3, 0.5, 9, 8, 0.4, 0.2];
    fs.writeFileSync(path.join(dir, 'host-samples.jsonl'), steal.map((st, i) => JSON.stringify({ t: new Date(T0 + (i + 1) * 5000).toISOString(), seq: i + 1, intervalMs: 5000, cpu: { us: 40, sy: 10, id: 50 - st, wa: 0, st } })).join('\n') + '\n');
  }
  return dir;
}

test('a repeat folder gives the p50 of its quiet seconds: the stolen, slow third is left out', () => {
  // 200 quiet requests of 3.000-3.009 ms: the 100th is 3.004 ms (over every second, with the slow third, the 150th: 3.007).
  assert.equal(quietP50OfRepeat(repeatFolder()), 3.004);
});

test('without host samples, or with a stream cut short, a repeat has no quiet p50 (undefined), and nothing throws', () => {
  assert.equal(quietP50OfRepeat(repeatFolder({ host: false })), undefined);
  assert.equal(quietP50OfRepeat(repeatFolder({ corrupt: true })), undefined);
  assert.equal(quietP50OfRepeat(path.join(os.tmpdir(), 'rig-no-such-repeat')), undefined);
});
