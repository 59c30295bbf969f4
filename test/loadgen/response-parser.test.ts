// test-mode: unit
// The generator's HTTP/1.1 response parser (lib/loadgen/http1/response-parser.ts) on bytes cut every
// way TCP may cut them: each response whole, split at every byte, several in one read, interim 1xx,
// chunked with extensions and trailers, bodies that run until the close, and what it refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResponseParser } from '../../lib/loadgen/http1/response-parser';

type Got = [status: number, reuse: boolean];

function parser() {
  const got: Got[] = [];
  const p = new ResponseParser({ onResponse: (status, reuse) => got.push([status, reuse]) });
  return { p, got };
}

/** Feeds `text` in pieces cut at `cuts` (positions), through one reused buffer like the socket's. */
function feed(p: ResponseParser, text: string, cuts: number[] = []): boolean {
  const bytes = Buffer.from(text, 'latin1');
  const shared = Buffer.alloc(bytes.length + 64, 0x41); // stale bytes after each read, as in a reused buffer
  let from = 0;
  for (const to of [...cuts.filter((c) => c < bytes.length), bytes.length]) {
    if (to <= from) continue;
    bytes.copy(shared, 0, from, to);
    shared.write('\r\n\r\n', to - from, 'latin1'); // stale bytes past the read: never to be taken as an end of head
    if (!p.execute(shared, 0, to - from)) return false;
    from = to;
  }
  return true;
}

const R201 = 'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
const CHUNKED = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n';
const R401 = 'HTTP/1.1 401 Unauthorized\r\ncontent-length: 27\r\n\r\n{"error":"bad key","f":"x"}';
const R500_CLOSE = 'HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 5\r\n\r\noops!';

test('a whole response in one read: status, body skipped, connection reusable', () => {
  const { p, got } = parser();
  assert.equal(feed(p, R201), true);
  assert.deepEqual(got, [[201, true]]);
  assert.equal(p.started, false);
});

test('every split point of every kind of response gives the same answer', () => {
  for (const [text, want] of [
    [R201, [201, true]],
    [CHUNKED, [200, true]],
    [R401, [401, true]],
    [R500_CLOSE, [500, false]],
  ] as const) {
    for (let cut = 1; cut < text.length; cut++) {
      const { p, got } = parser();
      assert.equal(feed(p, text, [cut]), true, `cut at ${cut}: ${p.error}`);
      assert.deepEqual(got, [want], `cut at ${cut} of ${JSON.stringify(text.slice(0, 20))}`);
    }
    // and one byte at a time
    const { p, got } = parser();
    assert.equal(feed(p, text, Array.from({ length: text.length }, (_, i) => i)), true);
    assert.deepEqual(got, [want]);
  }
});

test('several responses in one read, and one response spread over reads that also start the next', () => {
  const all = R201 + CHUNKED + R401 + R201;
  const { p, got } = parser();
  assert.equal(feed(p, all), true);
  assert.deepEqual(got, [
    [201, true],
    [200, true],
    [401, true],
    [201, true],
  ]);
  for (let cut = 1; cut < all.length; cut += 7) {
    const q = parser();
    assert.equal(feed(q.p, all, [cut, cut + 3, cut + 40]), true);
    assert.equal(q.got.length, 4, `cuts at ${cut}`);
  }
});

test('an interim 100 Continue is skipped; the final answer is the one reported', () => {
  const { p, got } = parser();
  assert.equal(feed(p, 'HTTP/1.1 100 Continue\r\n\r\n' + R201, [10, 30]), true);
  assert.deepEqual(got, [[201, true]]);
});

test('204 and 304 have no body; Content-Length: 0 neither', () => {
  const { p, got } = parser();
  feed(p, 'HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  assert.deepEqual(got, [
    [204, true],
    [304, true],
    [200, true],
  ]);
});

test('Connection: close, HTTP/1.0 and keep-alive tokens decide reuse', () => {
  const { p, got } = parser();
  feed(p, 'HTTP/1.1 200 OK\r\nconnection: Keep-Alive, Close\r\nContent-Length: 0\r\n\r\n');
  feed(p, 'HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n');
  feed(p, 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n');
  feed(p, 'HTTP/1.1 200 OK\r\nConnection: closed-captions\r\nContent-Length: 0\r\n\r\n');
  assert.deepEqual(got, [
    [200, false],
    [200, false],
    [200, true],
    [200, true],
  ]);
});

test('Keep-Alive: timeout=N is read as the server idle timeout', () => {
  const { p } = parser();
  assert.equal(p.keepAliveMs, -1);
  feed(p, 'HTTP/1.1 200 OK\r\nKeep-Alive: max=100, timeout=5\r\nContent-Length: 0\r\n\r\n');
  assert.equal(p.keepAliveMs, 5000);
});

test('a body without length or chunking runs until the close; finish() ends it', () => {
  const { p, got } = parser();
  assert.equal(feed(p, 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body', [20]), true);
  assert.deepEqual(got, []);
  assert.equal(p.started, true);
  assert.equal(p.finish(), true);
  assert.deepEqual(got, [[200, false]]);
  // an unknown transfer coding also runs until the close
  const q = parser();
  feed(q.p, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx');
  assert.equal(q.p.finish(), true);
  assert.deepEqual(q.got, [[200, false]]);
});

test('a response cut short: finish() says so, and started tells a half answer from none', () => {
  const { p, got } = parser();
  assert.equal(p.finish(), false);
  assert.equal(p.started, false);
  feed(p, R201.slice(0, 30));
  assert.equal(p.started, true);
  assert.equal(p.finish(), false);
  assert.deepEqual(got, []);
});

test('garbage and contradictions are refused with a reason', () => {
  for (const bad of [
    'SSH-2.0-OpenSSH_9.2\r\n\r\n',
    'HTTP/1.1 2x0 OK\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'HTTP/1.1 101 Switching Protocols\r\n\r\n',
  ]) {
    const { p } = parser();
    assert.equal(feed(p, bad), false, bad);
    assert.ok(p.error, bad);
  }
});
