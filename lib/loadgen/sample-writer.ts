// Writes the sample stream as it goes: gzip CSV, header first, one row per request as it completes
// (or is dropped). Rows are in completion order, not intended order; readers must not assume order.
//
// Rows are formatted straight into a 64 KB byte buffer (no string per row: at 10k rows/s, strings held
// for 100 ms survive young-generation GCs, get promoted and cost major GCs), which is handed to gzip
// when full or once a second. Compression runs on libuv's thread pool, off the generator's event loop;
// each hand-over wakes a pool thread, then the event loop when it is done, then again for the file
// write, so at low rates the timed flush is kept rare (it was every 100 ms: at 200 requests/s that was
// a tenth of the generator's wake-ups). close() ends the gzip member properly, so a run cut short
// (SIGINT, parent gone) still leaves a valid stream, complete up to then.
//
// Given the run's plan, the stream carries it (lib/protocol/stream-plan.ts): a `#plan` record before
// the header, and at close an `#end` record saying whether the run was cut short, so a reader judges
// the rows against the schedule they were offered under, not against whatever rows are there.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { SAMPLE_HEADER, SCENARIOS, STATUS_DROPPED } from '../protocol/sample-row';
import { formatEndRecord, formatPlanRecord, type StreamPlan } from '../protocol/stream-plan';
import { writeInt } from './ascii-int';

const CHUNK = 64 * 1024;
const ROW_MAX = 160; // 4 names <= 15 bytes + 6 integers <= 16 bytes + separators
const FLUSH_MS = 1000;
const SCENARIO_PREFIX = SCENARIOS.map((s) => Buffer.from(`${s},`, 'latin1'));
const COMMA = 44;
const NL = 10;
const MINUS = 45;

export class SampleWriter {
  private buf = Buffer.allocUnsafeSlow(CHUNK);
  private pos = 0;
  private readonly gzip: zlib.Gzip;
  private readonly file: fs.WriteStream;
  private readonly timer: NodeJS.Timeout;
  private error: Error | null = null;
  private closed = false;
  rows = 0;

  constructor(
    readonly filePath: string,
    private readonly plan: Pick<StreamPlan, 'mode' | 'rate' | 'batch' | 'seconds' | 'probe_rate' | 'run_tag' | 'arrivals' | 'share' | 'tenants' | 'duplicates' | 'batch_sizes' | 'timestamps'> | null = null,
  ) {
    fs.mkdirSync(path.dirname(filePath), { recursive: true });
    this.file = fs.createWriteStream(filePath);
    // Level 1: the stream is mostly digits and commas, level 1 is within ~15 % of level 6 at a
    // fraction of the CPU, and this runs beside a load generator.
    this.gzip = zlib.createGzip({ level: 1 });
    this.gzip.pipe(this.file);
    const onError = (err: Error) => {
      this.error ??= err;
    };
    this.gzip.on('error', onError);
    this.file.on('error', onError);
    if (plan) this.gzip.write(formatPlanRecord(plan));
    this.gzip.write(`${SAMPLE_HEADER}\n`);
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /**
   * Appends one row, byte for byte what formatSampleRow gives (a test holds them equal). scenario is
   * the index into SCENARIOS; on a dropped row (status -1) sent and done are ignored and left empty.
   */
  row(scenario: number, intended: number, sent: number, done: number, status: number, events: number, quantity: number): void {
    if (this.pos + ROW_MAX > CHUNK) this.flush();
    const b = this.buf;
    let p = this.pos;
    const name = SCENARIO_PREFIX[scenario];
    name.copy(b, p);
    p += name.length;
    p = writeInt(b, p, intended);
    b[p++] = COMMA;
    if (status !== STATUS_DROPPED) {
      p = writeInt(b, p, sent);
      b[p++] = COMMA;
      p = writeInt(b, p, done);
      b[p++] = COMMA;
      p = writeInt(b, p, status);
    } else {
      b[p++] = COMMA;
      b[p++] = COMMA;
      b[p++] = MINUS;
      b[p++] = 49; // '1'
    }
    b[p++] = COMMA;
    p = writeInt(b, p, events);
    b[p++] = COMMA;
    p = writeInt(b, p, quantity);
    b[p++] = NL;
    this.pos = p;
    this.rows++;
  }

  flush(): void {
    if (this.pos === 0 || this.closed) return;
    // gzip keeps the chunk until it has compressed it, so the next rows go into a fresh buffer.
    this.gzip.write(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafeSlow(CHUNK);
    this.pos = 0;
  }

  /**
   * Flushes, writes the `#end` record (a stream with a plan: whether the run was cut short), ends the
   * gzip member and waits until the file is closed.
   */
  close(end: { cutShort: boolean; reason: string | null } = { cutShort: false, reason: null }): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.flush();
    if (this.plan) this.gzip.write(formatEndRecord(end.cutShort, end.reason));
    this.closed = true;
    clearInterval(this.timer);
    return new Promise((resolve, reject) => {
      const done = () => (this.error ? reject(new Error(`writing ${this.filePath}: ${this.error.message}`)) : resolve());
      if (this.error) return done();
      this.file.once('close', done);
      this.file.once('error', done);
      this.gzip.end();
    });
  }
}
