// Reads a sample stream (gzip CSV) into columns, refusing anything that is not a complete, valid
// stream: a corrupt row, a truncated file or a broken gzip member is an error naming the line, never
// rows skipped silently. The row format itself is lib/protocol/sample-row.ts.
//
// The stream is exactly ONE gzip member, as the writer makes it: the reader parses the member's header
// itself, inflates its deflate data raw, checks the trailer's CRC-32 and length, and refuses any byte
// after it. (zlib's gunzip would read a second member as more rows, and skip trailing zeros, silently.)
// Each decompressed chunk is consumed as it arrives, so a failure names the line it came after.
// Lines are split without copying; a line that spans chunks is joined once, when its newline comes.
//
// A stream the generator wrote carries its plan (lib/protocol/stream-plan.ts): a `#plan` record as its
// first line, before the header, and an `#end` record as its last. Both are read into columns.plan; a
// plan without its `#end` is a stream its writer never closed, read as cut short. A stream without a
// `#plan` (an older one, another tool's) is read as before, with no plan.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { SAMPLE_HEADER, SampleColumns, SampleFormatError, isSampleHeader, parseSampleRecord, refuseDuplicateRows } from '../protocol/sample-row';
import { END_RECORD, PLAN_RECORD, PlanError, parseEndRecord, parsePlanRecord, type StreamPlan } from '../protocol/stream-plan';

export class SampleFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    reason: string,
  ) {
    super(`${file}${line === null ? '' : `: line ${line}`}: ${reason}`);
    this.name = 'SampleFileError';
  }
}

export interface ReadSampleOptions {
  /** The stream is a closed loop's (a ceiling): its ingest rows may share an intended time. */
  closedLoop?: boolean;
}

const NL = 10;
const HASH = 35;

function startsWith(buf: Buffer, start: number, end: number, prefix: string): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[start + i] !== prefix.charCodeAt(i)) return false;
  return true;
}
/** No valid row is near this long (7 fields of at most 16 characters); a longer line is refused as it grows. */
export const MAX_LINE_BYTES = 4096;
/**
 * Line 1 may be a `#plan` record, which for a trace carries the trace's gaps (lib/protocol/arrivals.ts:
 * up to a million requests, a few bytes each): it alone may be this long.
 */
export const MAX_PLAN_LINE_BYTES = 16 * 1024 * 1024;
/** The columns are first sized from the file (~8 compressed bytes per row), at most this many rows. */
const MAX_INITIAL_ROWS = 1 << 22;

export async function readSampleFile(file: string, opts: ReadSampleOptions = {}): Promise<SampleColumns> {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new SampleFileError(file, null, 'no such file: give the path of a samples.csv.gz written by `rig measure`');
  }
  if (st.isDirectory()) throw new SampleFileError(file, null, 'is a directory: give the path of a samples.csv.gz written by `rig measure`');
  if (!st.isFile()) throw new SampleFileError(file, null, 'is not a regular file: give the path of a samples.csv.gz written by `rig measure`');
  const size = st.size;
  if (size === 0) throw new SampleFileError(file, 1, 'empty file: not a gzip stream (a stream of no rows still has its header)');
  const cols = new SampleColumns(Math.min(MAX_INITIAL_ROWS, Math.max(1024, Math.ceil(size / 8))));
  const lines = new LineReader(file, cols);
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(Math.min(size, 64 * 1024));
    fs.readSync(fd, head, 0, head.length, 0);
    const headerLen = gzipHeaderLength(head, size);
    if (typeof headerLen === 'string') throw new SampleFileError(file, 1, `corrupt gzip data after line 0: ${headerLen}`);
    const consumed = await inflateMember(fd, headerLen, lines);
    const trailerAt = headerLen + consumed.input;
    const trailer = Buffer.alloc(8);
    const got = fs.readSync(fd, trailer, 0, 8, trailerAt);
    if (got < 8) throw new SampleFileError(file, lines.line + 1, `truncated: the gzip stream ends after line ${lines.line} (its trailer is cut); refusing a partial stream`);
    if (trailer.readUInt32LE(0) !== consumed.crc) throw new SampleFileError(file, lines.line + 1, `corrupt gzip data after line ${lines.line}: incorrect data check (CRC-32 of the rows differs from the trailer's)`);
    if (trailer.readUInt32LE(4) !== consumed.output % 2 ** 32) throw new SampleFileError(file, lines.line + 1, `corrupt gzip data after line ${lines.line}: incorrect length check`);
    const end = trailerAt + 8;
    if (end < size) {
      const next = Buffer.alloc(2);
      fs.readSync(fd, next, 0, 2, end);
      const what = next[0] === 0x1f && next[1] === 0x8b ? 'a second gzip member' : `${size - end} bytes`;
      throw new SampleFileError(file, lines.line + 1, `${what} after the stream's end (byte ${end} of ${size}): a sample stream is one gzip member, refusing rows that are not the writer's`);
    }
  } catch (err) {
    if (err instanceof SampleFileError) throw err;
    if (err instanceof SampleFormatError) throw new SampleFileError(file, err.line, err.reason);
    const code = (err as NodeJS.ErrnoException).code;
    const msg = (err as Error).message;
    if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(msg)) {
      throw new SampleFileError(file, lines.line + 1, `truncated: the gzip stream ends after line ${lines.line} (the file was cut while being written); refusing a partial stream`);
    }
    // zlib drops the output of the call that failed (up to a chunk): count again in small steps, so
    // the line named is the last one that decompressed whole, not the last one this pass had parsed.
    const line = await linesBeforeFailure(file, lines.line);
    throw new SampleFileError(file, line + 1, `corrupt gzip data after line ${line}: ${msg}`);
  } finally {
    fs.closeSync(fd);
  }
  if (lines.pendingBytes > 0) {
    throw new SampleFileError(file, lines.line + 1, 'truncated: the last line has no newline (the stream was cut mid-row); refusing a partial stream');
  }
  if (lines.line === 0) throw new SampleFileError(file, 1, `empty stream: no header line '${SAMPLE_HEADER}'`);
  if (lines.line < lines.headerLine) throw new SampleFileError(file, lines.line + 1, `the stream ends after its #plan record, without the header line '${SAMPLE_HEADER}'`);
  if (lines.plan) {
    cols.plan = lines.ended ? lines.plan : { ...lines.plan, cut_short: true, cut_reason: 'the stream has no #end record: its writer never closed it' };
  }
  try {
    refuseDuplicateRows(cols, opts);
  } catch (err) {
    if (err instanceof SampleFormatError) throw new SampleFileError(file, err.line, err.reason);
    throw err;
  }
  return cols;
}

/** Splits decompressed bytes into lines and parses each: the header first, then rows. */
class LineReader {
  line = 0;
  private pending: Buffer[] = [];
  pendingBytes = 0;
  /** Line 1, or 2 after a `#plan` record. */
  headerLine = 1;
  plan: StreamPlan | null = null;
  /** The `#end` record was read: no line may follow it. */
  ended = false;

  constructor(
    private readonly file: string,
    private readonly cols: SampleColumns,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl < 0) break;
      if (this.pendingBytes > 0) {
        const whole = Buffer.concat([...this.pending, chunk.subarray(start, nl)]);
        this.pending = [];
        this.pendingBytes = 0;
        this.one(whole, 0, whole.length);
      } else {
        this.one(chunk, start, nl);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLine()) {
        throw new SampleFormatError(this.line + 1, `line is longer than ${this.maxLine()} bytes without a newline: not a sample row`);
      }
    }
  }

  /** The longest the next line may be: only line 1 (a `#plan` record) may exceed a row's bound. */
  private maxLine(): number {
    return this.line === 0 ? MAX_PLAN_LINE_BYTES : MAX_LINE_BYTES;
  }

  private one(buf: Buffer, start: number, end: number): void {
    if (end - start > this.maxLine()) throw new SampleFormatError(this.line + 1, `line is longer than ${this.maxLine()} bytes: not a sample row`);
    this.line++;
    if (this.ended) throw new SampleFormatError(this.line, 'a line after the #end record: the stream ends with it');
    if (this.line === 1 && startsWith(buf, start, end, PLAN_RECORD)) {
      this.plan = this.record(() => parsePlanRecord(buf.toString('utf8', start + PLAN_RECORD.length, end)));
      this.headerLine = 2;
      this.cols.firstRowLine = 3;
    } else if (this.line === this.headerLine) {
      if (!isSampleHeader(buf, start, end)) {
        throw new SampleFileError(this.file, this.line, `header is '${buf.subarray(start, Math.min(end, start + 120)).toString('latin1')}', expected '${SAMPLE_HEADER}'`);
      }
    } else if (buf[start] === HASH) {
      if (!this.plan || !startsWith(buf, start, end, END_RECORD)) {
        throw new SampleFormatError(this.line, `'${buf.subarray(start, Math.min(end, start + 40)).toString('latin1')}' is not a row: the only records are #plan (line 1) and #end (the last line, after a #plan)`);
      }
      const e = this.record(() => parseEndRecord(buf.toString('utf8', start + END_RECORD.length, end)));
      this.plan = { ...this.plan, cut_short: e.cut_short, cut_reason: e.reason };
      this.ended = true;
    } else {
      parseSampleRecord(buf, start, end, this.line, this.cols);
    }
  }

  private record<T>(read: () => T): T {
    try {
      return read();
    } catch (err) {
      if (err instanceof PlanError) throw new SampleFormatError(this.line, err.message);
      throw err;
    }
  }
}

/** Complete lines that decompress before the deflate data fails (at least `atLeast`). */
async function linesBeforeFailure(file: string, atLeast: number): Promise<number> {
  let n = 0;
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const got = fs.readSync(fd, head, 0, head.length, 0);
    const headerLen = gzipHeaderLength(head.subarray(0, got), fs.fstatSync(fd).size);
    if (typeof headerLen === 'string') return atLeast;
    const counter = {
      push(chunk: Buffer) {
        for (let p = chunk.indexOf(NL); p >= 0; p = chunk.indexOf(NL, p + 1)) n++;
      },
    };
    await inflateMember(fd, headerLen, counter, 1024).catch(() => undefined);
  } finally {
    fs.closeSync(fd);
  }
  return Math.max(n, atLeast);
}

/**
 * The length of the gzip member header at the start of `b` (RFC 1952), or why it is not one.
 * `fileSize` tells a short file from a header longer than the bytes read.
 */
export function gzipHeaderLength(b: Buffer, fileSize: number): number | string {
  if (b.length < 10) return b.length === 0 ? 'unexpected end of file' : fileSize < 10 ? 'unexpected end of file' : 'incorrect header check';
  if (b[0] !== 0x1f || b[1] !== 0x8b) return 'incorrect header check (not gzip data)';
  if (b[2] !== 8) return 'unknown compression method';
  const flg = b[3];
  if (flg & 0xe0) return 'reserved header flags set';
  let p = 10;
  if (flg & 4) {
    if (p + 2 > b.length) return 'unexpected end of file';
    p += 2 + b.readUInt16LE(p);
  }
  for (const bit of [8, 16]) {
    if (!(flg & bit)) continue;
    while (p < b.length && b[p] !== 0) p++;
    if (p >= b.length) return 'unexpected end of file';
    p++;
  }
  if (flg & 2) p += 2;
  if (p > b.length) return 'unexpected end of file';
  return p;
}

/**
 * Inflates the raw deflate data from `offset` to its end, feeding each decompressed chunk to `lines`
 * as it arrives. Returns the compressed bytes the deflate data took, the decompressed length and its
 * CRC-32. Chunks are written one at a time, each after the previous one was processed, so a failure
 * (a corrupt row, corrupt data) stops the reading where it happened.
 */
async function inflateMember(fd: number, offset: number, lines: { push(chunk: Buffer): void }, chunkSize = 1 << 18): Promise<{ input: number; output: number; crc: number }> {
  const inflate = zlib.createInflateRaw({ chunkSize });
  let output = 0;
  let crc = 0;
  let failure: unknown = null;
  let ended = false;
  inflate.on('data', (chunk: Buffer) => {
    if (failure !== null) return;
    output += chunk.length;
    crc = zlib.crc32(chunk, crc);
    try {
      lines.push(chunk);
    } catch (err) {
      failure = err;
    }
  });
  const done = new Promise<void>((resolve, reject) => {
    inflate.once('end', () => {
      ended = true;
      resolve();
    });
    inflate.once('error', reject);
  });
  done.catch(() => undefined);
  const buf = Buffer.allocUnsafe(Math.max(chunkSize, 1 << 12) * 4);
  let pos = offset;
  for (;;) {
    if (failure !== null) break;
    const n = fs.readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    pos += n;
    const chunk = Buffer.from(buf.subarray(0, n));
    const wrote = new Promise<void>((resolve, reject) => {
      inflate.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
    wrote.catch(() => undefined); // a failed write also fails `done`, which the race reports
    await Promise.race([wrote, done]);
    if (ended) break;
  }
  if (failure === null && !ended) inflate.end();
  if (failure === null) await done;
  inflate.destroy();
  if (failure !== null) throw failure as Error;
  return { input: inflate.bytesWritten, output, crc: crc >>> 0 };
}
