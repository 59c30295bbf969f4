// test-mode: unit
// Hostile streams as properties (fast-check): streams of any rate, batch, length, latency and probe,
// as the rig's generator writes them, each damaged one way. Every damage turns a PASS into its own
// failure (or the reader's refusal), and an undamaged stream keeps its verdict. Through the real
// reader and the one verdict function (planned-stream.ts judgeStream).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { hash32 } from '../../lib/loadgen/prng';
import { SampleFileError } from '../../lib/loadgen/sample-reader';
import type { Evaluation } from '../../lib/protocol/evaluate';
import { verdictLine } from '../../lib/protocol/run-report';
import { flagsPlan } from '../../lib/protocol/stream-plan';
import { cutEnd, delayBurst, duplicateRow, judgeStream, keepEvery, makeStream, overflowColumn, removeSecond, strayRow, withoutPlan, type Stream } from './planned-stream';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-hostile-prop-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Enough runs to meet every corner the shapes have, few enough for a unit file (seconds). */
const RUNS = { numRuns: 25 };

interface Shape {
  rr: number;
  batch: number;
  seconds: number;
  baseMs: number;
  seed: number;
  probeRate: number;
}

/** 60-150 requests/s for 18-30 s: always >= 1,000 samples and thirds of >= 100, p99 well under 50 ms. */
const shapes: fc.Arbitrary<Shape> = fc.record({
  rr: fc.integer({ min: 60, max: 150 }),
  batch: fc.integer({ min: 1, max: 10 }),
  seconds: fc.integer({ min: 18, max: 30 }),
  baseMs: fc.integer({ min: 2, max: 20 }),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  probeRate: fc.constantFrom(0, 1, 2, 5),
});

/** A healthy run: latency base..1.2 x base (drift at most x1.2), on time. */
function healthy(sh: Shape, latency?: (n: number, s: number) => number): Stream {
  return makeStream({
    rate: sh.rr * sh.batch,
    batch: sh.batch,
    seconds: sh.seconds,
    probeRate: sh.probeRate,
    seed: sh.seed,
    latencyMs: latency ?? ((n) => sh.baseMs * (1 + (hash32(sh.seed, n) % 1000) / 5000)),
  });
}

const failed = (e: Evaluation) => e.verdict.ingest.checks.filter((c) => c.passed === false).map((c) => c.name);

async function refusedWith(s: Stream, re: RegExp): Promise<void> {
  await assert.rejects(judgeStream(dir, s), (e: unknown) => e instanceof SampleFileError && re.test(e.message));
}

test('an undamaged stream keeps its verdict: PASS with its plan, PASS with the same plan from the flags, NOT JUDGED without one', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, async (sh) => {
      const s = healthy(sh);
      const e = await judgeStream(dir, s);
      assert.equal(e.verdict.state, 'PASS', verdictLine(e.report));
      const flags = await judgeStream(dir, withoutPlan(s), { plan: flagsPlan(sh.rr * sh.batch, sh.batch, sh.seconds) });
      assert.equal(flags.verdict.state, 'PASS', verdictLine(flags.report));
      const none = await judgeStream(dir, withoutPlan(s));
      assert.equal(none.verdict.state, 'NOT JUDGED');
      assert.match(verdictLine(none.report), /^NOT JUDGED \(no plan\)/);
    }),
    RUNS,
  );
});

test('a removed second fails "not delivered" naming exactly that second', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, fc.nat(), async (sh, k) => {
      const sec = k % sh.seconds;
      const e = await judgeStream(dir, removeSecond(healthy(sh), sec));
      assert.equal(e.verdict.state, 'FAIL');
      assert.deepEqual(failed(e), ['delivered']);
      assert.deepEqual(e.report.delivery?.short_seconds, [sec]);
      assert.deepEqual(e.report.delivery?.empty_seconds, [sec]);
    }),
    RUNS,
  );
});

test('a stream keeping every k-th request fails "not delivered", every second short', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, fc.integer({ min: 2, max: 10 }), async (sh, k) => {
      const e = await judgeStream(dir, keepEvery(healthy(sh), k));
      assert.equal(e.verdict.state, 'FAIL');
      assert.ok(failed(e).includes('delivered'));
      assert.equal(e.report.delivery?.short_seconds.length, sh.seconds);
    }),
    RUNS,
  );
});

test('a cut end is CUT SHORT when its #end says so, and "not delivered" from the cut on when it does not', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, fc.nat(), fc.boolean(), async (sh, k, admits) => {
      const at = 1 + (k % (sh.seconds - 1));
      const e = await judgeStream(dir, cutEnd(healthy(sh), at, admits));
      if (admits) {
        assert.equal(e.verdict.state, 'CUT SHORT');
        assert.equal(e.verdict.passed, false);
      } else {
        assert.equal(e.verdict.state, 'FAIL');
        assert.ok(failed(e).includes('delivered'));
        assert.deepEqual(e.report.delivery?.short_seconds, Array.from({ length: sh.seconds - at }, (_, i) => at + i));
      }
    }),
    RUNS,
  );
});

test('a delayed burst (the generator stalled) fails the instrument alone, naming the second it began in', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, fc.nat(), fc.integer({ min: 100, max: 5000 }), async (sh, k, ms) => {
      const at = k % (sh.seconds - 1);
      const e = await judgeStream(dir, delayBurst(healthy(sh), at, ms / 1000));
      assert.equal(e.verdict.state, 'FAIL');
      assert.deepEqual(failed(e), ['instrument']);
      assert.ok(e.report.late_seconds.includes(at), `late seconds ${e.report.late_seconds.join(',')} name ${at}`);
      assert.ok((e.report.schedule_lag_max_ms ?? 0) > 50);
    }),
    RUNS,
  );
});

test('a duplicated row, a stray row and an overflowing column are refused, naming the line', async () => {
  await fc.assert(
    fc.asyncProperty(shapes, fc.nat(), fc.nat(), async (sh, i, off) => {
      const s = healthy(sh);
      const row = i % s.rows.length;
      await refusedWith(duplicateRow(s, row), new RegExp(`line ${row + 4}: duplicate row: `));
      await refusedWith(overflowColumn(s, row), new RegExp(`line ${row + 3}: events 4294967306 does not fit its column`));
      // after the window, or between two scheduled times inside it
      const interval = 1e6 / sh.rr;
      const inside = Math.floor((row % (sh.rr * sh.seconds - 1)) * interval) + 1 + (off % Math.floor(interval - 2));
      await refusedWith(strayRow(s, sh.seconds * 1e6 + (off % 1e9)), /a row outside the schedule/);
      await refusedWith(strayRow(s, inside), /a row outside the schedule/);
    }),
    RUNS,
  );
});

test('a failing stream never turns into a PASS under any damage', async () => {
  const damages = fc.oneof(
    fc.nat().map((k) => (s: Stream, sh: Shape) => removeSecond(s, k % sh.seconds)),
    fc.integer({ min: 2, max: 10 }).map((k) => (s: Stream) => keepEvery(s, k)),
    fc.nat().map((k) => (s: Stream, sh: Shape) => cutEnd(s, 1 + (k % (sh.seconds - 1)), false)),
    fc.integer({ min: 100, max: 3000 }).map((ms) => (s: Stream, sh: Shape) => delayBurst(s, sh.seconds - 4, ms / 1000)),
    fc.constant((s: Stream) => strayRow(s, 100e6)),
  );
  await fc.assert(
    fc.asyncProperty(shapes, damages, async (sh, damage) => {
      // latency rising 3x over the run: drift fails
      const rising = healthy(sh, (_n, sec) => sh.baseMs * (1 + (2 * sec) / (sh.seconds - 1)));
      const d = await judgeStream(dir, rising);
      assert.ok(failed(d).includes('drift'));
      let after: Evaluation | null = null;
      try {
        after = await judgeStream(dir, damage(rising, sh));
      } catch (err) {
        assert.ok(err instanceof SampleFileError, String(err)); // refused: never judged at all
      }
      if (after) assert.notEqual(after.verdict.state, 'PASS', verdictLine(after.report));
    }),
    RUNS,
  );
});
