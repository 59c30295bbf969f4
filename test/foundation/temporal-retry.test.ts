// test-mode: unit
// throughFailover (activities/temporal-retry.ts): a call to Temporal that answers UNAVAILABLE (a
// failover, a rolling restart) is retried until it answers, each retry told (the activity heartbeats
// it); one that keeps failing gives up once its window is spent, naming it; any other error (a bad
// query, not found) goes up at once. The errors have the shape @grpc/grpc-js gives the client's
// callers (code, details, metadata), wrapped as the client wraps them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grpcCode, throughFailover } from '../../activities/temporal-retry';

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}
const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;

test('UNAVAILABLE is retried until Temporal answers again, each retry told', async () => {
  let calls = 0;
  const told: string[] = [];
  const r = await throughFailover(
    'the baseline search',
    async () => {
      if (++calls < 4) throw new Error('Failed to list workflows', { cause: grpcError(UNAVAILABLE, 'No connection established') });
      return 'answered';
    },
    { windowMs: 30_000, onRetry: (l) => told.push(l) },
  );
  assert.equal(r, 'answered');
  assert.equal(calls, 4);
  assert.equal(told.length, 3);
  assert.match(told[0], /^the baseline search: Temporal answered UNAVAILABLE \(attempt 1\); trying again in \d+ ms$/);
});

test('a failover longer than the window gives up, naming it; another error goes up at once', async () => {
  let calls = 0;
  await assert.rejects(
    throughFailover('the baseline search', async () => {
      calls++;
      throw grpcError(UNAVAILABLE, 'No connection established');
    }, { windowMs: 1_200 }),
    /^Error: the baseline search: Temporal did not answer for 1 s \(\d+ attempts; last: 14 No connection established\)$/,
  );
  assert.ok(calls >= 2, `${calls} attempts`);
  let once = 0;
  await assert.rejects(
    throughFailover('the baseline search', async () => {
      once++;
      throw grpcError(INVALID_ARGUMENT, 'invalid query');
    }),
    /invalid query/,
  );
  assert.equal(once, 1, 'not retried');
  assert.equal(grpcCode(new Error('plain')), undefined);
});
