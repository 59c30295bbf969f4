// test-mode: unit
// What the waiting commands say through a Temporal outage (client/temporal-outage.ts): only gRPC
// UNAVAILABLE (here or in the cause chain, as the SDK's ServiceError wraps it) is an outage; it is
// said once, then at most once a minute, and once more when Temporal answers again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceError } from '@temporalio/client';
import { OutageReporter, isTemporalUnreachable } from '../../client/temporal-outage';

const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });

test('UNAVAILABLE, bare or as the ServiceError cause handle.result() rejects with, is an outage; other errors are not', () => {
  assert.equal(isTemporalUnreachable(new ServiceError('Failed to get Workflow execution history', { cause: grpc(14, 'No connection established') })), true);
  assert.equal(isTemporalUnreachable(grpc(14, 'Connection dropped')), true);
  // A query no worker answers ends DEADLINE_EXCEEDED: not an outage. NOT_FOUND and plain errors neither.
  assert.equal(isTemporalUnreachable(grpc(4, 'context deadline exceeded')), false);
  assert.equal(isTemporalUnreachable(new ServiceError('x', { cause: grpc(5, 'workflow not found') })), false);
  assert.equal(isTemporalUnreachable(new Error('boom')), false);
  assert.equal(isTemporalUnreachable(undefined), false);
});

test('said once with the time it began, reminded at most once a minute, and the end said once', () => {
  const said: string[] = [];
  const r = new OutageReporter((l) => said.push(l));
  const t0 = new Date('2026-01-01T10:00:00.000Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  const down = grpc(14, 'No connection established');
  assert.equal(r.failed(new Error('no worker'), t0, at(1)), false, 'not an outage: nothing said');
  assert.equal(r.failed(down, at(5), at(45)), true);
  assert.equal(r.failed(down, at(2), at(46)), true, 'an earlier call failing moves the start back, without a second line');
  for (let s = 47; s < 105; s++) r.failed(down, at(s), at(s));
  r.failed(down, at(106), at(106));
  r.answered(at(130));
  r.answered(at(131));
  assert.deepEqual(said, [
    'Temporal unreachable since 2026-01-01T10:00:05.000Z, retrying (the campaign goes on on its workers; this command waits for it)',
    'Temporal still unreachable since 2026-01-01T10:00:02.000Z (1 min 44 s), retrying',
    'Temporal answers again (unreachable from 2026-01-01T10:00:02.000Z, 2 min 8 s); following the campaign',
  ]);
  assert.equal(r.unreachableSince, undefined);
});
