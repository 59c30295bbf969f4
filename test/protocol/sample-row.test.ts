// test-mode: unit
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SAMPLE_HEADER, SampleColumns, SampleFormatError, duplicateRows, formatSampleRow, isFailed, isOk, isSampleHeader, parseSampleLine, refuseDuplicateRows, type SampleRow } from '../../lib/protocol/sample-row';

test('the header is the contract of ARCHITECTURE.md', () => {
  assert.equal(SAMPLE_HEADER, 'scenario,intended_us,sent_us,done_us,status,events,quantity');
  const b = Buffer.from(`${SAMPLE_HEADER}\r`);
  assert.ok(isSampleHeader(b, 0, b.length));
  const bad = Buffer.from('scenario,intended_us');
  assert.ok(!isSampleHeader(bad, 0, bad.length));
});

test('rows round-trip through format and parse; a dropped row has empty sent and done', () => {
  const rows = [
    { scenario: 'ingest' as const, intended_us: 1000, sent_us: 1200, done_us: 6200, status: 201, events: 10, quantity: 523 },
    { scenario: 'ingest' as const, intended_us: 2000, sent_us: null, done_us: null, status: -1, events: 10, quantity: 0 },
    { scenario: 'probe:aggregate' as const, intended_us: 0, sent_us: 0, done_us: 330000, status: 200, events: 0, quantity: 0 },
    { scenario: 'probe:customers' as const, intended_us: 5, sent_us: 7, done_us: 9, status: 0, events: 0, quantity: 0 },
  ];
  assert.equal(formatSampleRow(rows[1]), 'ingest,2000,,,-1,10,0\n');
  assert.equal(formatSampleRow(rows[0]), 'ingest,1000,1200,6200,201,10,523\n');
  for (const r of rows) assert.deepEqual(parseSampleLine(formatSampleRow(r).trimEnd()), r);
  assert.deepEqual(parseSampleLine('ingest,1,2,3,500,1,1\r').status, 500);
});

test('status classes: 2xx ok; 0, 4xx, 5xx failed; -1 neither', () => {
  assert.ok(isOk(201) && isOk(200) && !isOk(500) && !isOk(0) && !isOk(-1));
  assert.ok(isFailed(0) && isFailed(401) && isFailed(500) && !isFailed(201) && !isFailed(-1));
});

test('a corrupt row is an error naming its line and what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty line/],
    ['ingest,1,2,3,201,1', /7 comma-separated fields, found 6/],
    ['ingest,1,2,3,201,1,1,9', /found more/],
    ['ingest', /found 1/],
    ['write,1,2,3,201,1,1', /unknown scenario 'write'/],
    ['ingest,1.5,2,3,201,1,1', /intended_us is not an integer: '1.5'/],
    ['ingest,-1,2,3,201,1,1', /intended_us must not be negative/],
    ['ingest,,2,3,201,1,1', /intended_us is empty/],
    ['ingest,1,,3,201,1,1', /must have integer sent_us and done_us/],
    ['ingest,1,2,,201,1,1', /must have integer sent_us and done_us/],
    ['ingest,1,2,3,-1,1,0', /dropped row \(status -1\) must have empty sent_us and done_us/],
    ['ingest,5,4,6,201,1,1', /sent_us 4 is before intended_us 5/],
    ['ingest,1,5,4,201,1,1', /done_us 4 is before sent_us 5/],
    ['ingest,1,2,3,42,1,1', /status must be -1 .* got 42/],
    ['ingest,1,2,3,-2,1,1', /status must be -1 .* got -2/],
    ['ingest,1,2,3,201,-1,1', /events must not be negative/],
    ['ingest,1,2,3,201,1,x', /quantity is not an integer: 'x'/],
    ['ingest,1234567890123456,2,3,201,1,1', /more than 15 digits/],
    ['ingest,1,2,3,201,1,-', /quantity is not an integer: '-'/],
    ['ingest,900000000000000,900000000000000,900000000000001,201,1,1', /intended_us 900000000000000 is more than 7 days after the start/],
    ['ingest,1,2,604800000001,201,1,1', /done_us 604800000001 is more than 7 days/],
  ];
  for (const [line, re] of cases) {
    assert.throws(
      () => parseSampleLine(line, 17),
      (e: unknown) => e instanceof SampleFormatError && e.line === 17 && re.test(e.message) && e.message.startsWith('line 17: '),
      `'${line}' should fail with ${re}`,
    );
  }
});

test('columns validate rows pushed directly, like the parser', () => {
  const c = new SampleColumns(1);
  c.push({ scenario: 'ingest', intended_us: 1, sent_us: 1, done_us: 2, status: 201, events: 1, quantity: 1 });
  assert.throws(() => c.push({ scenario: 'ingest', intended_us: 1, sent_us: 3, done_us: 2, status: 201, events: 1, quantity: 1 }), /line 3: done_us 2 is before sent_us 3/);
  for (let i = 0; i < 100; i++) c.push({ scenario: 'ingest', intended_us: i, sent_us: null, done_us: null, status: -1, events: 1, quantity: 0 });
  assert.equal(c.length, 101);
  assert.equal(c.row(100).intended_us, 99);
  assert.equal(c.row(100).sent_us, null);
});

test('an integer that does not fit its column is refused, never stored wrapped', () => {
  const cases: Array<[string, RegExp]> = [
    ['ingest,1,2,3,201,4294967306,5000000000', /line 9: events 4294967306 does not fit its column/],
    ['ingest,1,2,3,201,2147483648,5000000000', /line 9: events 2147483648 does not fit its column/],
    ['probe:aggregate,1,2,3,200,2147483648,0', /line 9: events 2147483648 does not fit/],
  ];
  for (const [line, re] of cases) assert.throws(() => parseSampleLine(line, 9), (e: unknown) => e instanceof SampleFormatError && e.line === 9 && re.test(e.message), line);
  assert.equal(parseSampleLine('probe:aggregate,1,2,3,200,2147483647,0').events, 2147483647);
  const c = new SampleColumns(1);
  assert.throws(() => c.push({ scenario: 'ingest', intended_us: 1, sent_us: 2, done_us: 3, status: 201, events: 1, quantity: 2 ** 53 }), /quantity .* does not fit its column/);
});

test('a 2xx ingest row carries 1 to 1,000 events and at least one quantity per event', () => {
  const cases: Array<[string, RegExp]> = [
    ['ingest,1,2,3,201,0,0', /line 5: a 2xx ingest row must carry 1 to 1000 events, got 0/],
    ['ingest,1,2,3,200,1001,5000', /must carry 1 to 1000 events, got 1001/],
    ['ingest,1,2,3,201,10,9', /line 5: a 2xx ingest row's quantity 9 is less than its 10 events/],
  ];
  for (const [line, re] of cases) assert.throws(() => parseSampleLine(line, 5), (e: unknown) => e instanceof SampleFormatError && e.line === 5 && re.test(e.message), line);
  // the bounds themselves, and rows the rule does not cover (a 5xx, a drop, a probe) still parse
  for (const ok of ['ingest,1,2,3,201,1,1', 'ingest,1,2,3,201,1000,1000', 'ingest,1,2,3,500,10,0', 'ingest,1,,,-1,10,0', 'probe:invoices,1,2,3,200,0,0']) parseSampleLine(ok);
});

test('duplicate rows (same scenario and intended time) are found and refused naming both lines', () => {
  const row = (scenario: SampleRow['scenario'], t: number): SampleRow => ({ scenario, intended_us: t, sent_us: t, done_us: t + 5, status: 201, events: 1, quantity: 1 });
  const c = SampleColumns.fromRows([row('ingest', 10), row('probe:aggregate', 10), row('ingest', 20), row('ingest', 30), row('ingest', 20)]);
  assert.deepEqual(duplicateRows(c), [2, 4]);
  assert.throws(() => refuseDuplicateRows(c), (e: unknown) => e instanceof SampleFormatError && e.line === 6 && /duplicate row: ingest at intended_us 20 is already on line 4/.test(e.message));
  // a closed loop's ingest intended is its send time: two workers may share a microsecond; its probe is still scheduled
  assert.equal(duplicateRows(c, { closedLoop: true }), null);
  const p = SampleColumns.fromRows([row('probe:aggregate', 10), row('ingest', 10), row('probe:aggregate', 10)]);
  assert.deepEqual(duplicateRows(p, { closedLoop: true }), [0, 2]);
  assert.equal(duplicateRows(SampleColumns.fromRows([row('ingest', 1), row('ingest', 2), row('probe:customers', 1)])), null);
});
