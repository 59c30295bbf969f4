// test-mode: unit
// The warm-up's judgement (lib/protocol/warmup.ts): only soundness stops a campaign (something
// answered, nothing failed, rows == acknowledged); its latency, drops and freezes are the cold start
// it exists to absorb and never stop anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SampleColumns, type SampleRow } from '../../lib/protocol/sample-row';
import { failedStatuses, judgeWarmup } from '../../lib/protocol/warmup';

const sound = { sent: 100, ok: 100, failed: 0, events_claimed: 1000, quantity_claimed: 50_000 };

test('a sound warm-up is ok, however slow or late it was', () => {
  assert.deepEqual(judgeWarmup(sound, { rows_written: 1000, quantity_gained: 50_000 }), { ok: true, reasons: [] });
});

test('nothing answered 2xx stops it, naming the statuses seen', () => {
  const j = judgeWarmup({ sent: 40, ok: 0, failed: 40, events_claimed: 0, quantity_claimed: 0 }, { rows_written: 0, quantity_gained: 0 }, { '500': 38, '0': 2 });
  assert.equal(j.ok, false);
  assert.deepEqual(j.reasons, ['nothing answered 2xx: 40 requests sent, 40 failed (38 x 500, 2 x transport error)']);
});

test('any failed request stops it: a broken target would fail every repeat after it', () => {
  const j = judgeWarmup({ ...sound, ok: 99, failed: 1, events_claimed: 990, quantity_claimed: 49_500 }, { rows_written: 990, quantity_gained: 49_500 }, { '503': 1 });
  assert.deepEqual(j.reasons, ['1 of 100 requests failed (1 x 503): the target is not sound']);
});

test('rows lost, or not counted, stop it', () => {
  assert.deepEqual(judgeWarmup(sound, { rows_written: 997, quantity_gained: 49_900 }).reasons, [
    "the service acknowledged 1000 events but the database gained 997 rows under the warm-up's run tag",
    'quantity acknowledged 50000, gained 49900',
  ]);
  assert.deepEqual(judgeWarmup(sound, null).reasons, ['not reconciled: the database was not counted']);
});

test('failedStatuses counts non-2xx ingest answers only: drops, 2xx and probe reads are not failures of the warm-up', () => {
  const row = (scenario: SampleRow['scenario'], status: number): SampleRow => ({ scenario, intended_us: 0, sent_us: status === -1 ? null : 1, done_us: status === -1 ? null : 2, status, events: 1, quantity: 1 });
  const c = SampleColumns.fromRows([row('ingest', 201), row('ingest', 500), row('ingest', 500), row('ingest', 0), row('ingest', -1), row('probe:invoices', 500), row('ingest', 401)]);
  assert.deepEqual(failedStatuses(c), { '500': 2, '0': 1, '401': 1 });
});
