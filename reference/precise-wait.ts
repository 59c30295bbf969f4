// The waiting build's switch (HC_ADDED_WAIT_US, issue 45): every data request waits N microseconds
// before its work, holding neither the CPU nor the event loop (other requests run meanwhile), as a
// slower downstream call would. Finer than HC_ADDED_DELAY_MS: Node's timers count whole milliseconds
// (setTimeout(1) took 1.13 ms at the median here), and the regressions worth finding are 0.1-0.2 ms.
//
// How: one helper thread sleeps in Atomics.wait, whose timeout takes fractions of a millisecond, until
// the earliest deadline it holds, then posts the due requests back to the event loop. Requests reach it
// through a ring in shared memory (the thread cannot read messages while it sleeps), and Atomics.notify
// wakes it when one arrives. Measured on this 2-core host (busy, load 4-8): a timed sleep overshoots by
// ~0.1 ms (the kernel's 50-µs timer slack, then the wake-up), and the post back to the event loop takes
// ~0.04 ms more, so a plain "sleep N" would add N + ~0.15 ms.
//
// So the thread is woken early, by a lead the event loop learns: every 16 requests it moves the lead by
// 0.7 of the median lateness (resumed - deadline) of those 16, within [0, N]. The median wait then
// converges on N (measured: 100/150/200/500/1000 µs asked, 123/156/204/503/1003 µs waited at the median);
// a wait under the path's own floor (~0.03-0.04 ms here: the post back with no sleep at all) cannot be
// shorter than that floor. The lead counts whatever delays a resumption, the event loop's own queue
// included; bounded by N, it can only ever make a request wait as if N were 0, never less than the
// work in front of it. bench/switches.ts measures what the switch really adds.
import { Worker } from 'node:worker_threads';

/** Slots in the ring: waits in flight at once (rate x wait); past this, a whole-ms timer takes the excess. */
const CAPACITY = 1 << 14;
/** Requests per correction of the lead, and the share of their median lateness it moves by. */
const WINDOW = 16;
const GAIN = 0.7;

// The helper thread: plain JavaScript (evaluated, so it needs no loader, from the sources or a build).
// ctl[0]: requests written (the futex word the thread sleeps on); ctl[1]: 1 = stop. at[k % CAPACITY]:
// request k's wake-up time, µs on process.hrtime's clock (one clock for every thread of the process).
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const ctl = new Int32Array(workerData.ctl);
const at = new Float64Array(workerData.at);
const cap = at.length;
const now = () => Number(process.hrtime.bigint()) / 1e3;
let read = 0;
const held = [];
for (;;) {
  const written = Atomics.load(ctl, 0);
  if (Atomics.load(ctl, 1) !== 0) break;
  for (; read !== written; read = (read + 1) | 0) held.push([read, at[((read % cap) + cap) % cap]]);
  const t = now();
  const due = [];
  let next = Infinity;
  for (let i = held.length - 1; i >= 0; i--) {
    if (held[i][1] <= t) {
      due.push(held[i][0]);
      held[i] = held[held.length - 1];
      held.pop();
    } else if (held[i][1] < next) next = held[i][1];
  }
  if (due.length) parentPort.postMessage(due);
  if (next === Infinity) Atomics.wait(ctl, 0, written);
  else Atomics.wait(ctl, 0, written, (next - t) / 1000);
}
`;

const nowUs = (): number => Number(process.hrtime.bigint()) / 1e3;

interface Waiting {
  resolve(): void;
  deadline: number;
}

export class PreciseWait {
  private readonly worker: Worker;
  private readonly ctl: Int32Array;
  private readonly at: Float64Array;
  private readonly waiting = new Map<number, Waiting>();
  private written = 0;
  private lateness: number[] = [];
  private leadUs = 0;
  private closed = false;

  constructor(readonly us: number) {
    const ctl = new SharedArrayBuffer(8);
    const at = new SharedArrayBuffer(8 * CAPACITY);
    this.ctl = new Int32Array(ctl);
    this.at = new Float64Array(at);
    this.worker = new Worker(THREAD, { eval: true, workerData: { ctl, at } });
    this.worker.on('message', (seqs: number[]) => this.wake(seqs));
    this.worker.on('error', (err) => console.error(`reference service: the wait thread failed: ${err.message}`));
    this.worker.unref(); // a sleeping helper must not keep the process alive
  }

  /** How early the thread is now woken (µs): the learned lateness of the path. */
  get lead(): number {
    return this.leadUs;
  }

  /** Waits about `us` µs (at the median), holding no CPU. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      const start = nowUs();
      if (this.closed || this.waiting.size >= CAPACITY) {
        setTimeout(resolve, Math.ceil(this.us / 1000));
        return;
      }
      const k = this.written;
      this.at[((k % CAPACITY) + CAPACITY) % CAPACITY] = Math.max(start, start + this.us - this.leadUs);
      this.waiting.set(k, { resolve, deadline: start + this.us });
      this.written = (k + 1) | 0;
      Atomics.store(this.ctl, 0, this.written);
      Atomics.notify(this.ctl, 0);
    });
  }

  /** A few waits before serving, so the first requests already wait about N (at most 0.2 s of them). */
  async warm(): Promise<void> {
    const n = Math.min(3 * WINDOW, Math.floor(200_000 / Math.max(1, this.us)));
    for (let i = 0; i < n; i++) await this.wait();
  }

  private wake(seqs: number[]): void {
    const t = nowUs();
    for (const s of seqs) {
      const w = this.waiting.get(s);
      if (!w) continue;
      this.waiting.delete(s);
      this.lateness.push(t - w.deadline);
      w.resolve();
    }
    if (this.lateness.length >= WINDOW) {
      const sorted = this.lateness.sort((a, b) => a - b);
      const median = sorted[sorted.length >> 1];
      this.leadUs = Math.min(this.us, Math.max(0, this.leadUs + GAIN * median));
      this.lateness = [];
    }
  }

  /** Stops the thread; waits still held end on a timer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.ctl, 1, 1);
    Atomics.notify(this.ctl, 0);
    await this.worker.terminate();
    for (const w of this.waiting.values()) setTimeout(w.resolve, Math.ceil(this.us / 1000));
    this.waiting.clear();
  }
}
