// test-mode: unit
// Batch sizes from a distribution and client timestamps (issue 35, item 2), their pure parts: each
// request's size and each event's stamp are functions of (seed, k, i) alone, with the mean and the
// shares asked for; the stream's plan carries both (version 2, read back equal; without them the
// record is today's version 1 to the byte); the analysis holds every row's events to its request's
// size (a row that is not is refused, naming its line), counts the stamps as sent and among the
// claims, and reconciliation counts rows == Σ events of the accepted requests (each original once
// with duplicates) and Σ quantity over them; a database short by its late events fails the rows check
// saying so. The bodies carry the sizes and the stamps; the spec refuses bad fields naming them and
// the fix.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { dryRunPlan } from '../../client/dry-run';
import { BodyMaker } from '../../lib/loadgen/body';
import { BatchSizes, batchSizesMean, batchSizesProblem, type BatchSizesPlan } from '../../lib/protocol/batch-sizes';
import { ClientTimestamps, LATE, ON_TIME, OUT_OF_ORDER, timestampsProblem, type TimestampsPlan } from '../../lib/protocol/client-timestamps';
import { ClientMap, type DuplicatesPlan } from '../../lib/protocol/clients';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { formatPlanRecord, parsePlanRecord, PLAN_RECORD, scheduledUs, type StreamPlan } from '../../lib/protocol/stream-plan';
import { editRow, judgeStream, makeStream, truthfulDb } from './planned-stream';
import { specIssues } from '../harness/spec-issues';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-batches-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const uniform: BatchSizesPlan = { distribution: 'uniform', min: 1, max: 19, seed: 3 };
const geometric: BatchSizesPlan = { distribution: 'geometric', max: 100, seed: 5 };
const mix: BatchSizesPlan = { distribution: 'fixed-mix', mix: [{ size: 1, share: 0.5 }, { size: 4, share: 0.25 }, { size: 33, share: 0.25 }], seed: 9 };
const stamps: TimestampsPlan = { late_share: 0.1, lag_ms: 3_600_000, out_of_order_share: 0.05, out_of_order_ms: 1000, seed: 17 };

test('batch sizes: each distribution draws sizes of mean batch, within its bounds, the same for the same seed', () => {
  const n = 200_000;
  for (const [plan, batch] of [
    [uniform, 10],
    [geometric, 10],
    [mix, 10],
  ] as const) {
    const s = new BatchSizes(plan, batch);
    let sum = 0;
    const seen = new Map<number, number>();
    for (let k = 0; k < n; k++) {
      const x = s.of(k);
      assert.ok(Number.isInteger(x) && x >= 1 && x <= s.largest, `${plan.distribution}: request ${k} has ${x} events`);
      sum += x;
      seen.set(x, (seen.get(x) ?? 0) + 1);
    }
    assert.ok(Math.abs(sum / n - batchSizesMean(plan, batch)) < 0.1, `${plan.distribution}: mean ${sum / n}, the distribution's ${batchSizesMean(plan, batch)}`);
    assert.ok(Math.abs(batchSizesMean(plan, batch) - batch) <= 0.5);
    const again = new BatchSizes({ ...plan }, batch);
    for (let k = 0; k < 1000; k++) assert.equal(again.of(k), s.of(k));
    const other = new BatchSizes({ ...plan, seed: plan.seed + 1 }, batch);
    assert.ok(Array.from({ length: 1000 }, (_, k) => k).some((k) => other.of(k) !== s.of(k)), `${plan.distribution}: another seed, another draw`);
    if (plan.distribution === 'uniform') assert.deepEqual([...seen.keys()].sort((a, b) => a - b), Array.from({ length: 19 }, (_, i) => i + 1), 'every size of min..max');
    if (plan.distribution === 'fixed-mix') {
      assert.deepEqual([...seen.keys()].sort((a, b) => a - b), [1, 4, 33]);
      assert.ok(Math.abs((seen.get(1) ?? 0) / n - 0.5) < 0.01 && Math.abs((seen.get(33) ?? 0) / n - 0.25) < 0.01, 'each size its share');
    }
    if (plan.distribution === 'geometric') {
      // P(size = 1) = p = 1 / batch; P(size > j) = (1 - p)^j.
      assert.ok(Math.abs((seen.get(1) ?? 0) / n - 0.1) < 0.005, `P(1) = ${(seen.get(1) ?? 0) / n}`);
      const over20 = [...seen].filter(([x]) => x > 20).reduce((a, [, c]) => a + c, 0) / n;
      assert.ok(Math.abs(over20 - Math.pow(0.9, 20)) < 0.005, `P(> 20) = ${over20}`);
    }
  }
  assert.equal(new BatchSizes(geometric, 1).of(7), 1, 'a geometric of mean 1 is always 1');
});

test('batch sizes: a mean that is not the batch, bounds the wrong way round, shares that do not sum to 1 are refused naming the fix', () => {
  assert.equal(batchSizesProblem(uniform, 10), null);
  assert.match(batchSizesProblem(uniform, 12) ?? '', /the uniform sizes' mean is 10 events, but the configuration's batch is 12; batch is the mean size .*: set batch to 10, or move the bounds so its mean is 12/);
  assert.match(batchSizesProblem({ ...uniform, min: 20, max: 2 }, 11) ?? '', /batchSizes\.min 20 is above batchSizes\.max 2: swap them/);
  assert.match(batchSizesProblem({ distribution: 'geometric', max: 1000, seed: 0 }, 200) ?? '', /geometric sizes' mean is 198\.\d+ events, .*lower batch: a geometric of mean 200 is cut short by the service's 1000 events a request/);
  assert.match(batchSizesProblem({ distribution: 'geometric', max: 20, seed: 0 }, 10) ?? '', /mean is 8\.78\d* events, .*raise batchSizes\.max \(20; at most 1000\) or lower batch/);
  assert.match(batchSizesProblem({ ...mix, mix: [{ size: 1, share: 0.5 }, { size: 3, share: 0.4 }] }, 2) ?? '', /shares sum to 0\.9: they must sum to 1/);
  assert.match(batchSizesProblem({ ...mix, mix: [{ size: 2, share: 0.5 }, { size: 2, share: 0.5 }] }, 2) ?? '', /mix\[1\]\.size 2 is listed twice/);
});

test('client timestamps: the shares late and out of order asked for, late by the lag, out of order by 1..outOfOrderMs, a function of (seed, k, i)', () => {
  const t = new ClientTimestamps(stamps);
  const counts = [0, 0, 0];
  const n = 100_000;
  for (let k = 0; k < n / 10; k++) {
    for (let i = 0; i < 10; i++) {
      const kind = t.kindOf(k, i);
      counts[kind]++;
      const off = t.offsetMs(k, i);
      if (kind === ON_TIME) assert.equal(off, 0);
      else if (kind === LATE) assert.equal(off, 3_600_000);
      else assert.ok(off >= 1 && off <= 1000 && Number.isInteger(off), `out of order by ${off} ms`);
    }
  }
  assert.ok(Math.abs(counts[LATE] / n - 0.1) < 0.005, `${counts[LATE] / n} late`);
  assert.ok(Math.abs(counts[OUT_OF_ORDER] / n - 0.05) < 0.005, `${counts[OUT_OF_ORDER] / n} out of order`);
  const again = new ClientTimestamps({ ...stamps });
  for (let k = 0; k < 500; k++) assert.equal(again.offsetMs(k, 3), t.offsetMs(k, 3));
  assert.equal(timestampsProblem(stamps), null);
  assert.match(timestampsProblem({ ...stamps, lag_ms: 500 }) ?? '', /timestamps\.lagMs \(500\) must be above timestamps\.outOfOrderMs \(1000\)/);
  assert.match(timestampsProblem({ ...stamps, late_share: 0 }) ?? '', /timestamps\.lagMs is the late events' lag: give timestamps\.lateShare too/);
  assert.match(timestampsProblem({ ...stamps, late_share: 0.7, out_of_order_share: 0.5 }) ?? '', /must be at most 1, got 1\.2/);
});

test('the plan record carries batch sizes and timestamps as version 2 and reads them back; without them it is version 1, as before', () => {
  const plan: StreamPlan = { mode: 'open', rate: 1000, batch: 10, seconds: 5, probe_rate: 0, run_tag: 'x', cut_short: false, cut_reason: null, source: 'stream' };
  assert.equal(formatPlanRecord(plan), '#plan {"v":1,"mode":"open","rate":1000,"batch":10,"seconds":5,"probe_rate":0,"run_tag":"x"}\n');
  const rec = formatPlanRecord({ ...plan, batch_sizes: mix, timestamps: stamps });
  assert.match(rec, /^#plan \{"v":2,.*"batch_sizes":\{"distribution":"fixed-mix","mix":\[.*\],"seed":9\},"timestamps":\{"late_share":0.1,"lag_ms":3600000,"out_of_order_share":0.05,"out_of_order_ms":1000,"seed":17\}\}\n$/);
  const back = parsePlanRecord(rec.slice(PLAN_RECORD.length));
  assert.deepEqual([back.batch_sizes, back.timestamps], [mix, stamps]);
  assert.throws(() => parsePlanRecord(rec.slice(PLAN_RECORD.length).replace('"share":0.25}]', '"share":0.2}]')), /batchSizes\.mix's shares sum to 0\.9[45]/);
  assert.throws(() => parsePlanRecord(rec.slice(PLAN_RECORD.length).replace('"v":2', '"v":1')), /version 1 carries no arrivals/);
  assert.throws(() => parsePlanRecord(formatPlanRecord({ ...plan, batch: 12, batch_sizes: uniform }).slice(PLAN_RECORD.length)), /batch is the mean size/);
});

/** A stream on a plan of batch sizes and stamps: each row its request's original's size, quantity 3 an event. */
function plannedStream(extra: Partial<StreamPlan>) {
  const base = makeStream({ rate: 2000, batch: 10, seconds: 4 });
  const plan = { ...(base.plan as StreamPlan), ...extra };
  const sizes = new BatchSizes(plan.batch_sizes ?? geometric, plan.batch);
  const m = new ClientMap(null, plan.duplicates ?? null, (k) => scheduledUs(200, k));
  const rows = base.rows.map((r, k) => {
    const events = sizes.of(m.originalOf(k));
    return { ...r, events, quantity: 3 * events };
  });
  return { stream: { ...base, plan, rows }, map: m, sizes };
}

test('a stream of drawn sizes: every row held to its request\'s size (a wrong one refused, naming its line); rows == Σ events accepted, Σ quantity', async () => {
  const { stream } = plannedStream({ batch_sizes: geometric });
  const ev = await judgeStream(dir, stream);
  const r = ev.report;
  assert.ok(r.batch_sizes, 'the report has the sizes as sent');
  const events = stream.rows.reduce((a, x) => a + x.events, 0);
  assert.deepEqual([r.batch_sizes.requests_sent, r.batch_sizes.events_sent], [stream.rows.length, events]);
  assert.ok(Math.abs((r.batch_sizes.mean ?? 0) - 10) < 1.5, `mean ${r.batch_sizes.mean}`);
  assert.equal(r.events_claimed, events, 'every accepted request\'s own size');
  assert.equal(r.quantity_claimed, 3 * events);
  assert.equal(r.gate.checks.find((c) => c.name === 'rows')?.passed, true);
  assert.equal(r.gate.checks.find((c) => c.name === 'quantity')?.passed, true);
  assert.equal(r.timestamps, undefined, 'no stamps in the plan: none in the report');
  // One row whose events are not its request's draw: the stream is refused, naming the line.
  const k = stream.rows.findIndex((x) => x.events !== 10);
  await assert.rejects(judgeStream(dir, editRow(stream, k, { events: 10, quantity: 30 })), new RegExp(`line ${k + 3}: ingest row intended at ${stream.rows[k].intended_us} µs carries 10 events; the plan's geometric batch sizes give request ${k} ${stream.rows[k].events}`));
  // Without batch sizes in the plan the same rows are not held to them (today's analysis), and no key is added.
  const plain = await judgeStream(dir, { ...stream, plan: { ...(stream.plan as StreamPlan), batch_sizes: undefined } });
  assert.equal('batch_sizes' in plain.report, false);
});

test('drawn sizes with repeats: a repeat carries its original\'s size, claimed once: rows == the unique events of the accepted requests', async () => {
  const dups: DuplicatesPlan = { share: 0.2, mode: 'random', seed: 4, after_ms: 1000 };
  const { stream, map } = plannedStream({ batch_sizes: uniform, duplicates: dups });
  const originals = new Set(stream.rows.map((_, k) => map.originalOf(k)));
  const unique = [...originals].reduce((a, o) => a + new BatchSizes(uniform, 10).of(o), 0);
  const ev = await judgeStream(dir, stream, { reconciliation: { rows_written: unique, quantity_gained: 3 * unique } });
  assert.equal(ev.report.events_claimed, unique);
  assert.equal(ev.report.gate.checks.find((c) => c.name === 'rows')?.passed, true);
  assert.equal(ev.report.gate.checks.find((c) => c.name === 'quantity')?.passed, true);
  assert.ok(ev.report.clients && ev.report.clients.repeats > 100);
});

test('stamps as sent: late and out-of-order events counted from the plan; a database short by its late events fails the rows check saying so', async () => {
  const { stream, sizes } = plannedStream({ batch_sizes: geometric, timestamps: stamps });
  const t = new ClientTimestamps(stamps);
  let late = 0;
  let ooo = 0;
  stream.rows.forEach((_, k) => {
    for (let i = 0; i < sizes.of(k); i++) {
      if (t.kindOf(k, i) === LATE) late++;
      else if (t.kindOf(k, i) === OUT_OF_ORDER) ooo++;
    }
  });
  const ok = await judgeStream(dir, stream);
  const ts = ok.report.timestamps;
  assert.ok(ts, 'the report has the stamps as sent');
  assert.deepEqual([ts.late, ts.out_of_order, ts.late_claimed, ts.out_of_order_claimed], [late, ooo, late, ooo]);
  assert.ok(Math.abs((ts.late_share ?? 0) - 0.1) < 0.02 && Math.abs((ts.out_of_order_share ?? 0) - 0.05) < 0.02, `${ts.late_share}, ${ts.out_of_order_share}`);
  assert.equal(ok.report.gate.checks.find((c) => c.name === 'rows')?.passed, true);
  // A service that drops its late events: short by exactly them, and the check says how many were late.
  const db = truthfulDb(stream.rows);
  const lossy = await judgeStream(dir, stream, { reconciliation: { rows_written: db.rows_written - late, quantity_gained: db.quantity_gained - 3 * late } });
  const rows = lossy.report.gate.checks.find((c) => c.name === 'rows');
  assert.equal(rows?.passed, false);
  assert.equal(rows?.detail, `rows written ${db.rows_written - late} != events claimed ${db.rows_written} (missing ${late}); of the events claimed, ${late} were stamped late and ${ooo} out of order`);
  assert.equal(lossy.report.verdict.passed, false);
});

test('bodies: each request its drawn size, each event its stamp (late by the lag), keys unique; without either the bodies are today\'s', () => {
  const base = { runTag: 'r-9', meter: 'api_calls', customers: ['cus_1', 'cus_2'], batch: 10, seed: 7, quantityMax: 100 };
  const today = new BodyMaker(base);
  const sizes = new BatchSizes(mix, 10);
  const intendedUs = (n: number) => n * 5000;
  const m = new BodyMaker({ ...base, sizes, timestamps: new ClientTimestamps(stamps), intendedUs });
  m.epochMs = Date.parse('2026-12-05T12:00:00Z') + 0.25;
  const out = Buffer.alloc(m.maxBytes);
  const keys = new Set<string>();
  const t = new ClientTimestamps(stamps);
  for (let n = 0; n < 300; n++) {
    const made = m.make(n);
    assert.equal(m.count, sizes.of(n));
    const end = m.encode(n, out, 0);
    assert.equal(out.toString('utf8', 0, end), made.json, 'encode writes make\'s bytes');
    const parsed = JSON.parse(made.json) as ReturnType<BodyMaker['events']>;
    assert.deepEqual(parsed, m.events(n));
    assert.equal(parsed.events.length, sizes.of(n));
    parsed.events.forEach((e, i) => {
      keys.add(e.idempotency_key);
      assert.equal(Date.parse(e.timestamp ?? ''), Date.parse('2026-12-05T12:00:00Z') + n * 5 - t.offsetMs(n, i));
    });
  }
  assert.equal(keys.size, Array.from({ length: 300 }, (_, n) => sizes.of(n)).reduce((a, b) => a + b, 0), 'every key once');
  // Without sizes and stamps: n x batch + i counters, no timestamp key, as before.
  const plain = JSON.parse(today.make(3).json) as ReturnType<BodyMaker['events']>;
  assert.equal(plain.events.length, 10);
  assert.equal('timestamp' in plain.events[0], false);
  assert.deepEqual(plain, new BodyMaker({ ...base, sizes: null, timestamps: null }).events(3));
});

const example = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'batches.json'), 'utf8')) as Record<string, unknown> & { sustained: { configurations: Array<Record<string, unknown>> } };
const spec = (workload: unknown, c: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  ...example,
  sustained: { ...example.sustained, configurations: [{ ...example.sustained.configurations[0], ...c, workload }] },
  ...extra,
});

test('examples/batches.json parses; bad batch sizes and timestamps are refused at parse naming the field and the fix', () => {
  const ex = parseCampaignSpec(example).sustained!.configurations[0];
  assert.deepEqual(ex.workload, { batchSizes: { distribution: 'geometric', max: 100 }, timestamps: { lateShare: 0.1, lagMs: 3_600_000, outOfOrderShare: 0.05 } });
  // The dry run says what the requests carry (and nothing more for a configuration without them).
  const planned = dryRunPlan('b-1', parseCampaignSpec(example), new Date('2026-12-05T12:00:00Z')).configurations[0];
  assert.equal(planned.requests, 'geometric batch sizes of mean 10 (1-100), seed from each run tag; client timestamps on every event, 10 % 3600000 ms late, 5 % out of order (up to 1000 ms)');
  assert.equal('requests' in dryRunPlan('b-2', parseCampaignSpec(spec(undefined)), new Date('2026-12-05T12:00:00Z')).configurations[0], false);
  const w = 'sustained.configurations[0].workload';
  assert.deepEqual(specIssues(spec({ batchSizes: { distribution: 'uniform', min: 1, max: 30 } })), [
    `${w}.batchSizes: the uniform sizes' mean is 15.5 events, but the configuration's batch is 10; batch is the mean size (requests/s = eventsPerSecond / batch): set batch to 16, or move the bounds so its mean is 10`,
  ]);
  assert.deepEqual(specIssues(spec({ batchSizes: { distribution: 'uniform', min: 1, max: 30 } }, { batch: 16 })), []);
  assert.deepEqual(specIssues(spec({ batchSizes: { distribution: 'uniform', min: 12, max: 8 } })), [`${w}.batchSizes.min: batchSizes.min 12 is above batchSizes.max 8: swap them`]);
  assert.deepEqual(specIssues(spec({ batchSizes: { distribution: 'fixed-mix', mix: [{ size: 1, share: 0.5 }, { size: 19, share: 0.4 }] } })), [
    `${w}.batchSizes.mix: batchSizes.mix's shares sum to 0.9: they must sum to 1 (e.g. 0.8 and 0.2)`,
  ]);
  assert.deepEqual(specIssues(spec({ batchSizes: { distribution: 'uniform', min: 0, max: 20 } })), [`${w}.batchSizes.min: batchSizes.min must be at least 1 event`]);
  assert.match(specIssues(spec({ batchSizes: { distribution: 'pareto' } })).join('\n'), /workload\.batchSizes(\.distribution)?: batchSizes\.distribution must be one of "uniform", "geometric", "fixed-mix"/);
  assert.deepEqual(specIssues(spec({ timestamps: { lateShare: 0.1 } })), [`${w}.timestamps.lagMs: timestamps.lagMs must be a whole number of ms within 1..2592000000 (30 days) with lateShare, got 0 (3600000: an hour late)`]);
  assert.deepEqual(specIssues(spec({ timestamps: { lateShare: 0.1, lagMs: 800, outOfOrderShare: 0.05 } })), [
    `${w}.timestamps.lagMs: timestamps.lagMs (800) must be above timestamps.outOfOrderMs (1000), or a late event could not be told from an out-of-order one: raise lagMs or lower outOfOrderMs`,
  ]);
  assert.deepEqual(specIssues(spec({ timestamps: { lateShare: 1.5, lagMs: 60_000 } })), [`${w}.timestamps.lateShare: timestamps.lateShare must be at most 1 (0.1: one event in 10 is late)`]);
  assert.deepEqual(specIssues(spec({ timestamps: { lateShare: 0.1, lagMs: 60_000 } }, { load: { nodes: 2 } })).filter((e) => e.includes('timestamps')), [
    `${w}.timestamps: workload.timestamps is sent from one load node so far: set load.nodes to 1 for this configuration, or remove workload.timestamps`,
  ]);
});
