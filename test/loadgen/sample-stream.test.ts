// test-mode: unit
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import zlib from 'node:zlib';
import { MAX_LINE_BYTES, SampleFileError, readSampleFile } from '../../lib/loadgen/sample-reader';
import { SampleWriter } from '../../lib/loadgen/sample-writer';
import { SAMPLE_HEADER, SCENARIOS, formatSampleRow, type SampleRow } from '../../lib/protocol/sample-row';
import { formatEndRecord, formatPlanRecord } from '../../lib/protocol/stream-plan';

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

const valid = (n: number) => {
  let s = `${SAMPLE_HEADER}\n`;
  for (let i = 0; i < n; i++) s += `ingest,${i * 100},${i * 100 + 1},${i * 100 + 5000},201,10,${10 + ((i * 7919) % 500)}\n`;
  return s;
};

test('a second gzip member, or any byte after the first, is refused: a stream is one member', async () => {
  const gz = zlib.gzipSync(valid(3));
  await refuses('two.csv.gz', Buffer.concat([gz, zlib.gzipSync('ingest,9000,9001,9002,201,1,1\n')]), /line 5: a second gzip member after the stream's end \(byte \d+ of \d+\)/, 5);
  await refuses('zeros.csv.gz', Buffer.concat([gz, Buffer.alloc(4)]), /line 5: 4 bytes after the stream's end/, 5);
  await refuses('notrailer.csv.gz', gz.subarray(0, gz.length - 3), /truncated: the gzip stream ends after line 4 \(its trailer is cut\)/, 5);
  const badLen = Buffer.from(gz);
  badLen[badLen.length - 1] ^= 1;
  await refuses('len.csv.gz', badLen, /corrupt gzip data after line 4: incorrect length check/, 5);
  // a header with a file name (gzip -N) is still one member
  const named = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3]), Buffer.from('samples.csv\0'), gz.subarray(10)]);
  fs.writeFileSync(path.join(dir, 'named.csv.gz'), named);
  assert.equal((await readSampleFile(path.join(dir, 'named.csv.gz'))).length, 3);
});

test('corrupt deflate data names the last line that decompressed whole, not line 0', async () => {
  const gz = zlib.gzipSync(valid(3000));
  const g = Buffer.from(gz);
  const k = Math.floor(g.length * 0.3);
  g[k] ^= 0x55;
  g[k + 1] ^= 0xaa;
  g[k + 2] ^= 0x55;
  const file = path.join(dir, 'corrupt.csv.gz');
  fs.writeFileSync(file, g);
  await assert.rejects(readSampleFile(file), (e: unknown) => {
    assert.ok(e instanceof SampleFileError);
    const m = /corrupt gzip data after line (\d+)/.exec(e.message);
    assert.ok(m, e.message);
    const n = Number(m[1]);
    // zlib itself (fed a byte at a time) yields 737 whole lines here; a pass in 1-KB steps is within one step
    assert.ok(n > 600 && n <= 737, e.message);
    assert.equal(e.line, n + 1);
    return true;
  });
});

test('a directory, a huge sparse file and an endless line are clear refusals, quickly', async () => {
  await assert.rejects(readSampleFile(dir), (e: unknown) => e instanceof SampleFileError && /is a directory/.test(e.message));
  const sparse = path.join(dir, 'sparse.csv.gz');
  fs.closeSync(fs.openSync(sparse, 'w'));
  let t = Date.now();
  try {
    fs.truncateSync(sparse, 40e9);
    await assert.rejects(readSampleFile(sparse), (e: unknown) => e instanceof SampleFileError && /line 1: corrupt gzip data after line 0: incorrect header check/.test(e.message));
    assert.ok(Date.now() - t < 2000);
  } finally {
    fs.rmSync(sparse);
  }
  await refuses('zero.csv.gz', Buffer.alloc(0), /empty file: not a gzip stream/, 1);
  // one 48 MB line: refused when it passes MAX_LINE_BYTES, never joined chunk by chunk
  const long = zlib.gzipSync(`${SAMPLE_HEADER}\ningest,1,2,3,201,1,1\ningest,${'7'.repeat(48e6)}\n`);
  t = Date.now();
  await refuses('long.csv.gz', long, new RegExp(`line 3: line is longer than ${MAX_LINE_BYTES} bytes`), 3);
  assert.ok(Date.now() - t < 3000, `${Date.now() - t} ms`);
});

test('a line split across many chunks is read whole (linear: joined once at its newline)', async () => {
  const s = valid(200_000);
  const c = await (async () => {
    const file = path.join(dir, 'many.csv.gz');
    fs.writeFileSync(file, zlib.gzipSync(s, { level: 1 }));
    return readSampleFile(file);
  })();
  assert.equal(c.length, 200_000);
  assert.deepEqual(c.row(199_999), { scenario: 'ingest', intended_us: 19_999_900, sent_us: 19_999_901, done_us: 20_004_900, status: 201, events: 10, quantity: 10 + ((199_999 * 7919) % 500) });
});

test('a row written twice is refused naming both lines; a closed loop may repeat an ingest time', async () => {
  const body = `${SAMPLE_HEADER}\ningest,1,2,3,201,1,1\ningest,5,6,7,201,1,1\ningest,1,2,9,201,1,1\n`;
  await refuses('dup.csv.gz', zlib.gzipSync(body), /line 4: duplicate row: ingest at intended_us 1 is already on line 2/, 4);
  const file = path.join(dir, 'dup-closed.csv.gz');
  fs.writeFileSync(file, zlib.gzipSync(body));
  assert.equal((await readSampleFile(file, { closedLoop: true })).length, 3);
});

test('a stream carries its plan: #plan before the header, #end after the last row; both read back, lines counted from them', async () => {
  const file = path.join(dir, 'planned.csv.gz');
  const plan = { mode: 'open' as const, rate: 100, batch: 1, seconds: 2, probe_rate: 0, run_tag: 'rig-x' };
  const w = new SampleWriter(file, plan);
  w.row(0, 0, 10, 20, 201, 1, 3);
  w.row(0, 10_000, 10_010, 10_020, 201, 1, 3);
  await w.close({ cutShort: true, reason: 'SIGINT' });
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString('latin1');
  assert.equal(text, `${formatPlanRecord(plan)}${SAMPLE_HEADER}\ningest,0,10,20,201,1,3\ningest,10000,10010,10020,201,1,3\n${formatEndRecord(true, 'SIGINT')}`);
  assert.match(text, /^#plan \{"v":1,"mode":"open","rate":100,"batch":1,"seconds":2,"probe_rate":0,"run_tag":"rig-x"\}\n/);
  const c = await readSampleFile(file);
  assert.equal(c.length, 2);
  assert.deepEqual(c.plan, { ...plan, cut_short: true, cut_reason: 'SIGINT', source: 'stream' });
  assert.equal(c.firstRowLine, 3);
  const lines = text.split('\n');
  // a row after #end, a #plan without its #end (never closed: read as cut short), a bad plan, a stray record
  await refuses('after-end.csv.gz', zlib.gzipSync(`${text}ingest,20000,20010,20020,201,1,3\n`), /line 6: a line after the #end record/, 6);
  const open = path.join(dir, 'never-closed.csv.gz');
  fs.writeFileSync(open, zlib.gzipSync(`${lines.slice(0, 4).join('\n')}\n`));
  assert.deepEqual((await readSampleFile(open)).plan, { ...plan, cut_short: true, cut_reason: 'the stream has no #end record: its writer never closed it', source: 'stream' });
  await refuses('bad-plan.csv.gz', zlib.gzipSync(`#plan {"v":1,"mode":"open","rate":0,"batch":1,"seconds":2,"probe_rate":0}\n${SAMPLE_HEADER}\n`), /line 1: the #plan record's rate must be > 0/, 1);
  await refuses('no-header.csv.gz', zlib.gzipSync(`${lines[0]}\ningest,0,10,20,201,1,3\n`), /line 2: header is 'ingest,0,10,20,201,1,3'/, 2);
  await refuses('stray-record.csv.gz', zlib.gzipSync(`${SAMPLE_HEADER}\n#end {"cut_short":false}\n`), /line 2: '#end \{"cut_short":false\}' is not a row/, 2);
  // an old stream, without a plan, reads as before: rows from line 2, no plan
  const old = await readSampleFile(path.join(dir, 'ok.csv.gz'));
  assert.equal(old.plan, null);
  assert.equal(old.firstRowLine, 2);
});
