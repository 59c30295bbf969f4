// test-mode: unit
// The DB summary's arithmetic on known rows: only the service's active client backends are the
// requests' waits; an active ClientRead is the client's time, counted apart; background processes and
// the rig's sessions are the database's own rows, by whose they are; rows written before the sampler
// kept `who` count every client backend as a request; every share carries its count.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DbSample, WaitCount } from '../../lib/evidence/db-sampler';
import { ownWorkOver, REQUEST_CPU, shareText, summarizeDb } from '../../lib/evidence/report/db-summary';

const wal = { wal_records: 0, wal_bytes: 0, wal_fpi: 0 };
const row = (seq: number, waits: WaitCount[]): DbSample => ({ t: new Date(Date.UTC(2026, 11, 5, 4, 0, 0, seq * 200)).toISOString(), seq, waits, activeBackends: 0, wal, vacuum: [] });
const w = (who: string | undefined, state: string | null, type: string | null, event: string | null, count: number, backend_type = who === 'request' || who === 'rig' || who === undefined ? 'client backend' : who): WaitCount => ({
  ...(who === undefined ? {} : { who }),
  state,
  wait_event_type: type,
  wait_event: event,
  backend_type,
  count,
});

test("requests' waits: the service's active client backends only; ClientRead apart; the rest the database's own", () => {
  const rows = [0, 1, 2, 3].map((i) =>
    row(i, [
      w('request', 'active', 'Lock', 'transactionid', 3),
      w('request', 'active', null, null, 1),
      w('request', 'active', 'Client', 'ClientRead', 2),
      w('request', 'idle', 'Client', 'ClientRead', 10),
      w('checkpointer', null, 'Timeout', 'CheckpointWriteDelay', 1),
      w('walwriter', null, 'IO', 'WALSync', i % 2),
      w('autovacuum worker', 'active', 'Timeout', 'VacuumDelay', 1),
      w('rig', 'active', 'Timeout', 'PgSleep', 1),
      w('other client', 'idle', 'Client', 'ClientRead', 1, 'client backend'),
    ]),
  );
  const db = summarizeDb(rows, rows[0].t, null);
  assert.deepEqual(db.waits, [
    { event: 'Lock:transactionid', count: 12, share: 0.75 },
    { event: REQUEST_CPU, count: 4, share: 0.25 },
  ]);
  assert.equal(db.backend_samples, 16);
  assert.equal(db.client_read, 8);
  assert.deepEqual(
    db.own_work!.map((o) => [o.who, o.event, o.count, o.mean]),
    [
      ['autovacuum worker', 'Timeout:VacuumDelay', 4, 1],
      ['checkpointer', 'Timeout:CheckpointWriteDelay', 4, 1],
      ['rig', 'Timeout:PgSleep', 4, 1],
      ['walwriter', 'IO:WALSync', 2, 0.5],
    ],
  );
  assert.equal(shareText(db.waits[0]), 'Lock:transactionid 75 % (12)');
  assert.deepEqual(ownWorkOver([db, db], 1), [{ who: 'autovacuum worker', event: 'Timeout:VacuumDelay', count: 8, mean: 1 }]);
});

test('rows written before `who` was kept: every client backend a request, background processes their own', () => {
  const rows = [row(0, [w(undefined, 'active', 'IO', 'WALSync', 2), { state: null, wait_event_type: 'IO', wait_event: 'DataFileSync', backend_type: 'checkpointer', count: 1 }])];
  const db = summarizeDb(rows, rows[0].t, null);
  assert.deepEqual(db.waits, [{ event: 'IO:WALSync', count: 2, share: 1 }]);
  assert.deepEqual(db.own_work, [{ who: 'checkpointer', event: 'IO:DataFileSync', count: 1, mean: 1 }]);
  assert.equal(db.settings, null);
});
