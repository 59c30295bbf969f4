// test-mode: unit
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import zlib from 'node:zlib';
import { SampleFileError, readSampleFile } from '../../lib/loadgen/sample-reader';
import { SampleWriter } from '../../lib/loadgen/sample-writer';
import { SAMPLE_HEADER, SCENARIOS, formatSampleRow, type SampleRow } from '../../lib/protocol/sample-row';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-stream-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function rows(n: number): SampleRow[] {
  const out: SampleRow[] = [];
  for (let i = 0; i < n; i++) {
    const scenario = SCENARIOS[i % 7 === 0 ? 1 + (i % 3) : 0];
    const intended = i * 137 + (i % 10 === 0 ? 9_999_999_999 : 0);
    if (i % 11 === 0) out.push({ scenario, intended_us: intended, sent_us: null, done_us: null, status: -1, events: 10, quantity: 0 });
    else out.push({ scenario, intended_us: intended, sent_us: intended + (i % 50), done_us: intended + 5000 + i, status: [201, 200, 500, 0, 401][i % 5], events: i % 1001, quantity: i * 97 });
  }
  return out;
}

async function writeWith(file: string, rs: SampleRow[]): Promise<void> {
  const w = new SampleWriter(file);
  for (const r of rs) w.row(SCENARIOS.indexOf(r.scenario), r.intended_us, r.sent_us ?? 0, r.done_us ?? 0, r.status, r.events, r.quantity);
  await w.close();
}

test('the writer writes exactly what formatSampleRow says, and the reader reads it back', async () => {
  const file = path.join(dir, 'ok.csv.gz');
  const rs = rows(50_000);
  await writeWith(file, rs);
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString('latin1');
  assert.equal(text, `${SAMPLE_HEADER}\n${rs.map(formatSampleRow).join('')}`);
  const c = await readSampleFile(file);
  assert.equal(c.length, rs.length);
  for (const i of [0, 1, 10, 11, 4999, 49_999]) assert.deepEqual(c.row(i), rs[i]);
});

test('an empty run is a valid stream of just the header', async () => {
  const file = path.join(dir, 'empty.csv.gz');
  await writeWith(file, []);
  assert.equal((await readSampleFile(file)).length, 0);
});

async function refuses(name: string, bytes: Buffer, re: RegExp, line: number | null) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  await assert.rejects(readSampleFile(file), (e: unknown) => {
    assert.ok(e instanceof SampleFileError, String(e));
    assert.match(e.message, re);
    assert.equal(e.line, line);
    return true;
  });
}

test('a truncated gzip is refused, naming the line it stops after', async () => {
  const file = path.join(dir, 'full.csv.gz');
  await writeWith(file, rows(20_000));
  const whole = fs.readFileSync(file);
  const cut = whole.subarray(0, Math.floor(whole.length / 2));
  const file2 = path.join(dir, 'cut.csv.gz');
  fs.writeFileSync(file2, cut);
  await assert.rejects(readSampleFile(file2), (e: unknown) => e instanceof SampleFileError && /truncated/.test(e.message) && (e.line ?? 0) > 2);
});

test('a last line without its newline is refused (cut mid-row)', async () => {
  await refuses('nonl.csv.gz', zlib.gzipSync(`${SAMPLE_HEADER}\ningest,1,2,3,201,1,1\ningest,4,5`), /line 3: truncated: the last line has no newline/, 3);
});

test('a corrupt row is refused with its line number', async () => {
  await refuses('badrow.csv.gz', zlib.gzipSync(`${SAMPLE_HEADER}\ningest,1,2,3,201,1,1\ningest,1,2,3,201,1,1\ningest,9,2,3,201,1,1\n`), /line 4: sent_us 2 is before intended_us 9/, 4);
  await refuses('badfield.csv.gz', zlib.gzipSync(`${SAMPLE_HEADER}\ningest,1,2,3,20x,1,1\n`), /line 2: status is not an integer: '20x'/, 2);
});

test('a wrong header, an empty file, non-gzip data and a missing file are refused', async () => {
  await refuses('hdr.csv.gz', zlib.gzipSync('a,b,c\ningest,1,2,3,201,1,1\n'), /line 1: header is 'a,b,c'/, 1);
  await refuses('nothing.csv.gz', zlib.gzipSync(''), /empty stream/, 1);
  await refuses('plain.csv.gz', Buffer.from(`${SAMPLE_HEADER}\n`), /corrupt gzip data after line 0/, 1);
  const gz = zlib.gzipSync(`${SAMPLE_HEADER}\ningest,1,2,3,201,1,1\n`);
  gz[gz.length - 6] ^= 0xff; // damage the CRC trailer
  const file = path.join(dir, 'crc.csv.gz');
  fs.writeFileSync(file, gz);
  await assert.rejects(readSampleFile(file), (e: unknown) => e instanceof SampleFileError && /corrupt gzip data after line \d+: incorrect data check/.test(e.message));
  await assert.rejects(readSampleFile(path.join(dir, 'absent.csv.gz')), /no such file/);
});
