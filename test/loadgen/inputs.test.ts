// Bad input is refused before any load: options name the field and the fix; the pre-flight names the
// URL or the key. Bodies are the wire contract, with unique keys and a known quantity sum.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { BodyMaker } from '../../lib/loadgen/body';
import { IngestRequests } from '../../lib/loadgen/http1/request-head';
import { CalibrationServer } from '../../lib/loadgen/calibration-server';
import { customersFromListResponse } from '../../lib/loadgen/customers';
import { LoadOptionsError, resolveLoadOptions, type LoadOptions } from '../../lib/loadgen/options';
import { PreflightError, preflight } from '../../lib/loadgen/preflight';
import { hash32, intIn, seedFromString } from '../../lib/loadgen/prng';
import { RUN_TAG_PROPERTY } from '../../lib/protocol/hardcount-api';
import { freePort } from '../../lib/tools/free-port';

const base: LoadOptions = { url: 'http://127.0.0.1:9', rate: 1000, batch: 10, seconds: 60, out: '/tmp/x.csv.gz', customers: ['cus_1'] };

test('options: each bad field is named with its flag and a fix', () => {
  const bad: Array<[Partial<LoadOptions>, string, RegExp]> = [
    [{ rate: 0 }, 'rate', /rate \(--rate\) must be > 0 events per second, got 0: e\.g\. --rate 1000/],
    [{ rate: -5 }, 'rate', /must be > 0/],
    [{ rate: Number.NaN }, 'rate', /must be > 0/],
    [{ batch: 0 }, 'batch', /batch \(--batch\) must be a whole number of events per request within 1\.\.1000, got 0/],
    [{ batch: 1001 }, 'batch', /within 1\.\.1000, got 1001/],
    [{ batch: 2.5 }, 'batch', /got 2\.5/],
    [{ seconds: 0.5 }, 'seconds', /seconds \(--seconds\) must be at least 1 second, got 0\.5/],
    [{ url: 'ftp://x' }, 'url', /url \(--url\) must be an http\(s\) URL/],
    [{ url: 'not a url' }, 'url', /must be an http\(s\) URL/],
    [{ maxInFlight: 0 }, 'maxInFlight', /--max-in-flight/],
    [{ probeRate: -1 }, 'probeRate', /--probe-rate/],
    [{ customers: [] }, 'customers', /--customers FILE/],
    [{ runTag: 'bad tag!' }, 'runTag', /--run-tag/],
    [{ mode: 'closed', workers: undefined }, 'workers', /workers \(--workers\) must be a whole number/],
    [{ rate: 10_000_000, batch: 1 }, 'rate', /raise --batch/],
  ];
  for (const [patch, field, re] of bad) {
    assert.throws(
      () => resolveLoadOptions({ ...base, ...patch }),
      (e: unknown) => e instanceof LoadOptionsError && e.field === field && re.test(e.message),
      `${JSON.stringify(patch)} should name ${field}`,
    );
  }
});

test('options: defaults are resolved; requests/s = rate / batch', () => {
  const o = resolveLoadOptions(base);
  assert.equal(o.requestRate, 100);
  assert.equal(o.maxInFlight, 100);
  assert.equal(o.mode, 'open');
  assert.equal(o.meter, 'api_calls');
  assert.match(o.runTag, /^rig-\d{8}T\d{6}Z-[a-z0-9]+$/);
  assert.equal(o.seed, seedFromString(o.runTag));
  assert.equal(resolveLoadOptions({ ...base, rate: 20_000, batch: 1 }).maxInFlight, 2000);
  assert.equal(resolveLoadOptions({ ...base, rate: 50, batch: 10 }).maxInFlight, 32);
  const closed = resolveLoadOptions({ ...base, mode: 'closed', rate: undefined, workers: 16 });
  assert.deepEqual([closed.workers, closed.maxInFlight, closed.requestRate], [16, 16, 0]);
});

test('bodies as bytes (encode, the request path) are make() byte for byte, non-ASCII customers included; the request is head + body', () => {
  for (const batch of [1, 7, 1000]) {
    const m = new BodyMaker({ runTag: 'r-2', meter: 'api_calls', customers: ['cus_1', 'kündin-ä', 'c"3', 'x'.repeat(120)], batch, seed: 99, quantityMax: 1_000_000 });
    const out = Buffer.alloc(m.maxBytes + 10);
    for (const n of [0, 1, 9, 10, 123_456_789]) {
      const end = m.encode(n, out, 3);
      const want = m.make(n);
      assert.equal(out.toString('utf8', 3, end), want.json);
      assert.equal(m.quantity, want.quantity);
      assert.ok(end - 3 <= m.maxBytes);
    }
  }
  const m = new BodyMaker({ runTag: 'r-3', meter: 'm', customers: ['c'], batch: 2, seed: 1, quantityMax: 10 });
  const reqs = new IngestRequests('/p/v1/usage-events', 'h:1', 'key', m);
  const r = reqs.make(5).toString('utf8');
  const body = m.make(5).json;
  assert.equal(r, `POST /p/v1/usage-events HTTP/1.1\r\nHost: h:1\r\nAuthorization: Bearer key\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  assert.equal(reqs.quantity, m.make(5).quantity);
});

test('bodies: the wire shape, unique keys, the run tag in every event, quantities known in advance', () => {
  const plan = { runTag: 'r-1', meter: 'api_calls', customers: ['cus_1', 'cus_2', 'c"3'], batch: 50, seed: 1234, quantityMax: 100 };
  const m = new BodyMaker(plan);
  const keys = new Set<string>();
  let sum = 0;
  for (let n = 0; n < 200; n++) {
    const b = m.make(n);
    const parsed = JSON.parse(b.json) as ReturnType<BodyMaker['events']>;
    assert.deepEqual(parsed, m.events(n));
    let q = 0;
    for (const e of parsed.events) {
      assert.equal(e.properties?.[RUN_TAG_PROPERTY], 'r-1');
      assert.ok(plan.customers.includes(e.customer_id));
      assert.ok(e.quantity >= 1 && e.quantity <= 100 && Number.isInteger(e.quantity));
      keys.add(e.idempotency_key);
      q += e.quantity;
    }
    assert.equal(b.quantity, q);
    sum += q;
  }
  assert.equal(keys.size, 200 * 50);
  // the same (seed, index) always gives the same quantity: the sum is known without replaying the run
  let expected = 0;
  for (let k = 0; k < 200 * 50; k++) expected += intIn(1234, k, 1, 100);
  assert.equal(sum, expected);
  assert.notEqual(hash32(1, 2), hash32(2, 1));
});

test('customer lists: arrays, {data}, {customers}, strings or objects', () => {
  assert.deepEqual(customersFromListResponse(['a', 'b']), ['a', 'b']);
  assert.deepEqual(customersFromListResponse({ data: [{ id: 'x', external_id: 'cus_1' }, { id: 'y' }] }), ['cus_1', 'y']);
  assert.deepEqual(customersFromListResponse({ customers: [{ external_id: 'z' }] }), ['z']);
  assert.deepEqual(customersFromListResponse({ nothing: 1 }), []);
});

let server: CalibrationServer;
let url = '';
before(async () => {
  server = new CalibrationServer({ apiKey: 'good-key', customers: ['cus_1', 'cus_2'] });
  url = await server.start();
});
after(() => server.stop());

test('pre-flight: a URL that does not answer names --url', async () => {
  const port = await freePort();
  await assert.rejects(preflight(`http://127.0.0.1:${port}`, 'k'), (e: unknown) => e instanceof PreflightError && e.field === 'url' && /does not answer .*ECONNREFUSED.*start the service, or fix --url/.test(e.message));
});

test('pre-flight: a refused key names RIG_API_KEY; a missing one too', async () => {
  await assert.rejects(preflight(url, 'wrong-key'), (e: unknown) => e instanceof PreflightError && e.field === 'RIG_API_KEY' && /answered 401.*set RIG_API_KEY to a valid API key/.test(e.message));
  await assert.rejects(preflight(url, ''), (e: unknown) => e instanceof PreflightError && e.field === 'RIG_API_KEY' && /RIG_API_KEY is not set/.test(e.message));
});

test('pre-flight: a good key gives the target’s customers', async () => {
  assert.deepEqual((await preflight(url, 'good-key')).customers, ['cus_1', 'cus_2']);
});

test('pre-flight: an HTTP server that is not the API is named', async () => {
  const other = http.createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
  const port = (other.address() as { port: number }).port;
  try {
    await assert.rejects(preflight(`http://127.0.0.1:${port}`, 'k'), (e: unknown) => e instanceof PreflightError && e.field === 'url' && /GET \/healthz answered 404/.test(e.message));
  } finally {
    other.close();
  }
});
