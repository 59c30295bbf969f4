// test-mode: unit
// Traffic of several clients (issue 35, item 2), its pure parts: the Zipf draw of tenants and the
// choice of repeats are functions of (seed, k) alone, with the shares asked for; a repeat carries an
// earlier original (never a repeat) and goes with its original's tenant; after-timeout repeats come
// at least afterMs after their original. The stream's plan carries tenants and duplicates (version 2,
// read back equal); a stream of repeats is claimed once per original (rows == unique events) and each
// tenant's p99 is its own rows'. The spec refuses bad fields naming them and the fix.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ClientMap, duplicatesProblem, tenantsProblem, zipfShares, type DuplicatesPlan, type TenantsPlan } from '../../lib/protocol/clients';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { formatPlanRecord, parsePlanRecord, PLAN_RECORD, scheduledUs, type StreamPlan } from '../../lib/protocol/stream-plan';
import { judgeStream, makeStream } from './planned-stream';
import { specIssues } from '../harness/spec-issues';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-clients-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const tenants: TenantsPlan = { count: 10, s: 1.1, seed: 7 };
const random: DuplicatesPlan = { share: 0.05, mode: 'random', seed: 11, after_ms: 1000 };
const every = (k: number) => k * 1000; // 1,000 requests/s

test('tenants: a Zipf(1.1) draw over 10 tenants, the shares it asks for, the same for the same seed', () => {
  const m = new ClientMap(tenants, null, every);
  const n = 200_000;
  const got = new Array(10).fill(0);
  for (let k = 0; k < n; k++) got[m.tenantOf(k)]++;
  const want = zipfShares(10, 1.1);
  for (let i = 0; i < 10; i++) assert.ok(Math.abs(got[i] / n - want[i]) < 0.01, `tenant ${i + 1}: ${got[i] / n} of the requests, Zipf says ${want[i]}`);
  assert.ok(got[0] > got[1] && got[1] > got[9], 'tenant 1 is the hottest');
  const again = new ClientMap({ ...tenants }, null, every);
  for (let k = 0; k < 1000; k++) assert.equal(again.tenantOf(k), m.tenantOf(k));
  const other = new ClientMap({ ...tenants, seed: 8 }, null, every);
  assert.ok(Array.from({ length: 1000 }, (_, k) => k).some((k) => other.tenantOf(k) !== m.tenantOf(k)), 'another seed, another draw');
});

test('random duplicates: 5 % of requests repeat an original among the 1,000 before them, with its tenant', () => {
  const m = new ClientMap(tenants, random, every);
  const n = 100_000;
  let repeats = 0;
  for (let k = 0; k < n; k++) {
    const o = m.originalOf(k);
    if (o === k) continue;
    repeats++;
    assert.ok(o < k, `request ${k} repeats ${o}, an earlier one`);
    assert.equal(m.originalOf(o), o, 'an original is new');
    assert.equal(m.tenantOf(k), m.tenantOf(o), 'a repeat goes with its original\'s tenant');
  }
  assert.ok(Math.abs(repeats / n - 0.05) < 0.005, `${repeats / n} of the requests repeat`);
  assert.equal(m.originalOf(0), 0, 'the first request is new');
});

test('after-timeout duplicates: a repeat comes at least afterMs after the request it repeats, none before there is one', () => {
  const d: DuplicatesPlan = { share: 0.1, mode: 'after-timeout', seed: 3, after_ms: 250 };
  const m = new ClientMap(null, d, every);
  let repeats = 0;
  for (let k = 0; k < 20_000; k++) {
    const o = m.originalOf(k);
    if (o === k) continue;
    repeats++;
    assert.ok(every(k) - every(o) >= 250_000, `request ${k} repeats ${o}, ${every(k) - every(o)} µs before it`);
    if (k < 250) assert.fail(`request ${k} is intended before any request 250 ms earlier, yet repeats ${o}`);
  }
  assert.ok(repeats > 1500, `${repeats} repeats`);
});

test('the plan record carries tenants and duplicates as version 2 and reads them back; bad ones are refused naming the field', () => {
  const plan: StreamPlan = { mode: 'open', rate: 1000, batch: 10, seconds: 5, probe_rate: 0, run_tag: 'x', cut_short: false, cut_reason: null, source: 'stream', tenants, duplicates: random };
  const rec = formatPlanRecord(plan);
  assert.match(rec, /^#plan \{"v":2,.*"tenants":\{"count":10,"s":1.1,"seed":7\},"duplicates":\{"share":0.05,"mode":"random","seed":11,"after_ms":1000\}\}\n$/);
  const back = parsePlanRecord(rec.slice(PLAN_RECORD.length));
  assert.deepEqual([back.tenants, back.duplicates], [tenants, random]);
  assert.throws(() => parsePlanRecord(rec.slice(PLAN_RECORD.length).replace('"count":10', '"count":1')), /tenants\.count must be a whole number of tenants within 2\.\.1000, got 1/);
  assert.match(tenantsProblem({ ...tenants, s: -1 }) ?? '', /tenants\.s must be a Zipf exponent/);
  assert.match(duplicatesProblem({ ...random, share: 0.9 }) ?? '', /duplicates\.share must be a share of requests within \(0, 0\.5\]/);
  // Without them the record is version 1, as before.
  assert.match(formatPlanRecord({ ...plan, tenants: undefined, duplicates: undefined }), /^#plan \{"v":1,/);
});

test('a stream of repeats is claimed once per original, and each tenant\'s p99 is its own rows\'', async () => {
  const base = makeStream({ rate: 500, batch: 2, seconds: 4 });
  const plan = { ...(base.plan as StreamPlan), tenants: { count: 3, s: 1, seed: 5 }, duplicates: { ...random, share: 0.2 } };
  const m = new ClientMap(plan.tenants, plan.duplicates, (k) => scheduledUs(250, k));
  // Each row: its original's quantity (the same body), tenant t answering in t + 1 ms.
  const qOf = (k: number) => 10 + (k % 7);
  const rows = base.rows.map((r, k) => {
    const done = (r.sent_us ?? 0) + (m.tenantOf(k) + 1) * 1000;
    return { ...r, quantity: qOf(m.originalOf(k)), done_us: done };
  });
  const originals = new Set(rows.map((_, k) => m.originalOf(k)));
  const unique = { rows_written: originals.size * 2, quantity_gained: [...originals].reduce((a, k) => a + qOf(k), 0) };
  const ev = await judgeStream(dir, { ...base, plan, rows }, { reconciliation: unique });
  const r = ev.report;
  assert.ok(r.clients, 'the report has the clients');
  assert.ok(r.clients.repeats > 100, `${r.clients.repeats} repeats`);
  assert.equal(r.clients.repeats + originals.size, rows.length);
  assert.equal(r.events_claimed, originals.size * 2, 'rows == unique events');
  assert.equal(r.quantity_claimed, unique.quantity_gained, 'Σ quantity over unique events');
  assert.equal(r.gate.checks.find((c) => c.name === 'rows')?.passed, true);
  assert.equal(r.gate.checks.find((c) => c.name === 'quantity')?.passed, true);
  assert.deepEqual(
    r.clients.tenants?.map((t) => [t.tenant, t.p99_ms]),
    [
      [1, 1],
      [2, 2],
      [3, 3],
    ],
  );
  // Counted as if every row were new, the database would be short: the check says by how much.
  const naive = { rows_written: rows.length * 2, quantity_gained: rows.reduce((a, x) => a + x.quantity, 0) };
  const wrong = await judgeStream(dir, { ...base, plan, rows }, { reconciliation: naive });
  assert.equal(wrong.report.gate.checks.find((c) => c.name === 'rows')?.passed, false);
});

const example = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'tenants.json'), 'utf8')) as Record<string, unknown> & { sustained: { configurations: Array<Record<string, unknown>> } };
const spec = (workload: unknown, extra: Record<string, unknown> = {}) => ({
  ...example,
  sustained: { ...example.sustained, configurations: [{ ...example.sustained.configurations[0], workload }] },
  ...extra,
});
const errorsOf = specIssues;

test('examples/tenants.json: 10 tenants, Zipf s=1.1, 5 % duplicates; bad fields are refused naming the field and the fix', () => {
  const ex = parseCampaignSpec(example).sustained!.configurations[0].workload;
  assert.deepEqual(ex, { tenants: { count: 10, s: 1.1 }, duplicates: { share: 0.05, mode: 'random' } });
});

test('the spec: tenants and duplicates without arrivals parse; bad fields are refused naming the field and the fix', () => {
  const ok = parseCampaignSpec(spec({ tenants: { count: 10, s: 1.1 }, duplicates: { share: 0.05, mode: 'random' } }));
  assert.deepEqual(ok.sustained!.configurations[0].workload, { tenants: { count: 10, s: 1.1 }, duplicates: { share: 0.05, mode: 'random' } });
  const w = 'sustained.configurations[0].workload';
  assert.deepEqual(errorsOf(spec({ tenants: { count: 1, s: 1 } })), [`${w}.tenants.count: tenants.count must be at least 2 (one tenant: leave tenants out)`]);
  assert.deepEqual(errorsOf(spec({ duplicates: { share: 0.6, mode: 'random' } })), [`${w}.duplicates.share: duplicates.share must be at most 0.5`]);
  assert.match(errorsOf(spec({ duplicates: { share: 0.05, mode: 'sometimes' } })).join('\n'), /^sustained\.configurations\[0\]\.workload\.duplicates\.mode: duplicates\.mode must be "random" or "after-timeout"/);
  assert.deepEqual(errorsOf(spec({ tenants: { count: 3, s: 1 } }, { target: 'existing' })).filter((e) => e.includes('tenants')), [
    `${w}.tenants: tenants are made by target "local" only so far (target "existing" has the one fixtures tenant): remove workload.tenants or use target "local"`,
  ]);
});
