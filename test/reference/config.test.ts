// test-mode: unit
// Pure parts of the service: the HC_* environment, the API key format, and how the rollup strategy
// splits a window into whole days and scanned edges; the slow-recovering build's delay after a burst.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rollupPlan } from '../../reference/aggregate';
import { configFromEnv, resolveConfig } from '../../reference/config';
import { extraWalProblem, messageRecordBytes, MIN_EXTRA_WAL_BYTES, payloadFor } from '../../reference/extra-wal';
import { SlowRecovery } from '../../reference/slow-recovery';
import { bearerKey, hashApiKey, newApiKey } from '../../reference/keys';

test('configFromEnv: defaults are the measured configuration (per-event, per-minute, scan, pool 20, loopback)', () => {
  assert.deepEqual(configFromEnv({ HC_DATABASE_URL: 'postgres://a:b@h/d' }), {
    databaseUrl: 'postgres://a:b@h/d',
    port: 0,
    host: '127.0.0.1',
    poolSize: 20,
    lastUsed: 'per-minute',
    insert: 'per-event',
    aggregate: 'scan',
    addedDelayMs: 0,
    addedCpuUs: 0,
    addedWaitUs: 0,
    extraWalBytes: 0,
    slowRecoveryS: 0,
    burstRps: 0,
    slowRecoveryMs: 50,
    dropLateMs: 0,
    build: '',
  });
  const all = configFromEnv({
    HC_DATABASE_URL: 'postgres://x',
    HC_PORT: '8080',
    HC_HOST: '0.0.0.0',
    HC_POOL_SIZE: '60',
    HC_LAST_USED: 'every-request',
    HC_INSERT: 'multi-row',
    HC_AGGREGATE: 'rollup',
    HC_ADDED_DELAY_MS: '25',
    HC_ADDED_CPU_US: '150',
    HC_ADDED_WAIT_US: '120',
    HC_EXTRA_WAL_BYTES: '200',
    HC_BUILD: 'abc1234',
  });
  assert.deepEqual(
    [all.port, all.host, all.poolSize, all.lastUsed, all.insert, all.aggregate, all.addedDelayMs, all.addedCpuUs, all.addedWaitUs, all.extraWalBytes, all.build],
    [8080, '0.0.0.0', 60, 'every-request', 'multi-row', 'rollup', 25, 150, 120, 200, 'abc1234'],
  );
});

test('configFromEnv refuses bad values, naming the variable and never echoing the database URL', () => {
  const url = 'postgres://hardcount_app:sekrit-pw@h/d';
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{}, /HC_DATABASE_URL/],
    [{ HC_DATABASE_URL: url, HC_PORT: 'x' }, /HC_PORT/],
    [{ HC_DATABASE_URL: url, HC_PORT: '70000' }, /not a TCP port/],
    [{ HC_DATABASE_URL: url, HC_POOL_SIZE: '0' }, /pool size/],
    [{ HC_DATABASE_URL: url, HC_LAST_USED: 'sometimes' }, /HC_LAST_USED/],
    [{ HC_DATABASE_URL: url, HC_INSERT: 'bulk' }, /HC_INSERT/],
    [{ HC_DATABASE_URL: url, HC_AGGREGATE: 'cache' }, /HC_AGGREGATE/],
    [{ HC_DATABASE_URL: url, HC_ADDED_DELAY_MS: '-5' }, /HC_ADDED_DELAY_MS/],
    [{ HC_DATABASE_URL: url, HC_ADDED_DELAY_MS: '60001' }, /HC_ADDED_DELAY_MS/],
    [{ HC_DATABASE_URL: url, HC_BUILD: 'two\nlines' }, /HC_BUILD/],
    [{ HC_DATABASE_URL: url, HC_ADDED_CPU_US: '-1' }, /HC_ADDED_CPU_US must be a non-negative integer/],
    [{ HC_DATABASE_URL: url, HC_ADDED_CPU_US: '2.5' }, /HC_ADDED_CPU_US must be a non-negative integer/],
    [{ HC_DATABASE_URL: url, HC_ADDED_CPU_US: '100001' }, /^added CPU work 100001 \(HC_ADDED_CPU_US\) is not a whole number of microseconds from 0 \(off\) to 100000$/],
    [{ HC_DATABASE_URL: url, HC_ADDED_WAIT_US: '1ms' }, /HC_ADDED_WAIT_US must be a non-negative integer/],
    [{ HC_DATABASE_URL: url, HC_ADDED_WAIT_US: '60000001' }, /^added wait 60000001 \(HC_ADDED_WAIT_US\) is not a whole number of microseconds from 0 \(off\) to 60000000$/],
    [{ HC_DATABASE_URL: url, HC_EXTRA_WAL_BYTES: 'x' }, /HC_EXTRA_WAL_BYTES must be a non-negative integer/],
    [{ HC_DATABASE_URL: url, HC_EXTRA_WAL_BYTES: '62' }, /^extra WAL 62 \(HC_EXTRA_WAL_BYTES\) is under 63, the smallest WAL record a message makes: give 0 \(off\) or 63 and more$/],
    [{ HC_DATABASE_URL: url, HC_EXTRA_WAL_BYTES: '283' }, /^extra WAL 283 \(HC_EXTRA_WAL_BYTES\) cannot be 282-284: .* give 281 or 285$/],
    [{ HC_DATABASE_URL: url, HC_EXTRA_WAL_BYTES: '1048577' }, /HC_EXTRA_WAL_BYTES\) is not a whole number of bytes from 0 \(off\) to 1048576/],
    [{ HC_DATABASE_URL: url, HC_DROP_LATE_MS: '-1' }, /HC_DROP_LATE_MS/],
    [{ HC_DATABASE_URL: url, HC_SLOW_RECOVERY_S: '30' }, /HC_SLOW_RECOVERY_S needs HC_BURST_RPS/],
    [{ HC_DATABASE_URL: url, HC_SLOW_RECOVERY_S: '3601', HC_BURST_RPS: '300' }, /HC_SLOW_RECOVERY_S/],
    [{ HC_DATABASE_URL: url, HC_SLOW_RECOVERY_S: '30', HC_BURST_RPS: '300', HC_SLOW_RECOVERY_MS: '0' }, /HC_SLOW_RECOVERY_MS/],
  ];
  for (const [env, re] of cases) {
    assert.throws(
      () => configFromEnv(env),
      (err: Error) => re.test(err.message) && !err.message.includes('sekrit-pw'),
      JSON.stringify(env),
    );
  }
});

test('API keys: prefixed by mode, stored as sha256 hex, read from a Bearer header only', () => {
  const live = newApiKey(true);
  assert.match(live, /^hc_live_[A-Za-z0-9_-]{43}$/);
  assert.match(newApiKey(false), /^hc_test_/);
  assert.notEqual(newApiKey(true), live);
  assert.equal(hashApiKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(bearerKey(`Bearer ${live}`), live);
  assert.equal(bearerKey(`bearer  ${live} `), live);
  for (const h of [undefined, '', 'Bearer', 'Basic abc', `Bearer ${live} extra`]) assert.equal(bearerKey(h), undefined);
});

test('rollupPlan: whole UTC days from the rollup, partial days at the edges scanned, no whole day = scan only', () => {
  const d = (s: string) => new Date(s);
  assert.deepEqual(rollupPlan(), [null, null, true, null, null, null, null]);
  assert.deepEqual(rollupPlan(d('2026-08-11T00:00:00Z'), d('2026-08-13T00:00:00Z')), [
    '2026-08-11',
    '2026-08-13',
    true,
    null,
    null,
    null,
    null,
  ]);
  assert.deepEqual(rollupPlan(d('2026-08-11T06:00:00Z'), d('2026-08-13T18:00:00Z')), [
    '2026-08-12',
    '2026-08-13',
    true,
    '2026-08-11T06:00:00.000Z',
    '2026-08-12T00:00:00.000Z',
    '2026-08-13T00:00:00.000Z',
    '2026-08-13T18:00:00.000Z',
  ]);
  assert.deepEqual(rollupPlan(d('2026-08-12T01:00:00Z'), d('2026-08-12T20:00:00Z')), [
    null,
    null,
    false,
    '2026-08-12T01:00:00.000Z',
    '2026-08-12T20:00:00.000Z',
    null,
    null,
  ]);
  assert.deepEqual(rollupPlan(d('2026-08-12T01:00:00Z'), undefined), [
    '2026-08-13',
    null,
    true,
    '2026-08-12T01:00:00.000Z',
    '2026-08-13T00:00:00.000Z',
    null,
    null,
  ]);
});

test('SlowRecovery: no delay under the burst rate; the full delay in a burst, falling linearly to 0 over the recovery seconds after it', () => {
  let now = 0;
  const r = new SlowRecovery({ burstRps: 300, recoveryS: 20, delayMs: 50 }, () => now);
  // 100 requests/s for 10 s: never a burst.
  for (let i = 0; i < 1000; i++) {
    now = i * 10;
    assert.equal(r.arrive(), 0, `request ${i} at ${now} ms`);
  }
  // 500 requests/s from 10 s to 20 s: a burst once 301 arrived within a second.
  const during: number[] = [];
  for (let i = 0; i < 5000; i++) {
    now = 10_000 + i * 2;
    during.push(r.arrive());
  }
  assert.ok(during.slice(0, 100).every((d) => d === 0), 'the first requests of the spike are not yet a burst');
  assert.ok(during.slice(1000).every((d) => d === 50), 'in the burst: the full delay');
  // Just after it the sliding second still holds more than 300 (the spike's last 0.8 s): still a burst.
  now = 20_200;
  assert.equal(r.arrive(), 50);
  const last = 20_200;
  for (const [t, want] of [[last + 5_000, 37.5], [last + 10_000, 25], [last + 19_000, 2.5], [last + 20_000, 0], [last + 60_000, 0]]) {
    now = t;
    assert.ok(Math.abs(r.delayAt(t) - want) < 1e-9, `${t - last} ms after the burst: ${r.delayAt(t)}, want ${want}`);
    assert.ok(Math.abs(r.arrive() - want) < 1e-9);
  }
});

test('HC_EXTRA_WAL_BYTES: every accepted size has a payload whose record is exactly that size; the edges are accepted and refused by value', () => {
  assert.equal(MIN_EXTRA_WAL_BYTES, 63);
  assert.equal(messageRecordBytes(100), 163); // measured with pg_walinspect on PG 15: record_length 163, main_data_length 137
  for (let bytes = 0; bytes <= 5000; bytes++) {
    const problem = extraWalProblem(bytes);
    if (bytes === 0) assert.equal(problem, null);
    else if (bytes < 63 || (bytes >= 282 && bytes <= 284)) assert.ok(problem, `${bytes} refused`);
    else {
      assert.equal(problem, null, `${bytes} accepted`);
      assert.equal(messageRecordBytes(payloadFor(bytes)), bytes, `${bytes}: the payload ${payloadFor(bytes)} makes a record of exactly that size`);
    }
  }
  // resolveConfig (startService's own path) refuses as configFromEnv does, and accepts 0 as off.
  assert.throws(() => resolveConfig({ databaseUrl: 'postgres://x', extraWalBytes: 10 }), /HC_EXTRA_WAL_BYTES/);
  assert.throws(() => resolveConfig({ databaseUrl: 'postgres://x', addedCpuUs: 1.5 }), /HC_ADDED_CPU_US/);
  assert.throws(() => resolveConfig({ databaseUrl: 'postgres://x', addedWaitUs: -3 }), /HC_ADDED_WAIT_US/);
  assert.deepEqual(
    (({ addedCpuUs, addedWaitUs, extraWalBytes }) => [addedCpuUs, addedWaitUs, extraWalBytes])(resolveConfig({ databaseUrl: 'postgres://x', addedCpuUs: 100000, addedWaitUs: 60000000, extraWalBytes: 1048576 })),
    [100000, 60000000, 1048576],
  );
});
