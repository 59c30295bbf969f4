// test-mode: alone
// The generator's own HTTP/1.1 client (lib/loadgen/http1) against plain servers: node:http answering
// with Content-Length, chunked, 401 and 500, `Connection: close`, a server that closes idle
// connections (with and without a Keep-Alive hint), one that closes a kept-alive connection just as a
// request arrives, and then the whole generator (runLoad) against such servers: every request is a
// row with the status the server gave, counted once. Behaviour only, never timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BodyMaker } from '../../lib/loadgen/body';
import { Exchange, type ExchangeOwner } from '../../lib/loadgen/http1/exchange';
import { IngestRequests, getRequest } from '../../lib/loadgen/http1/request-head';
import { SocketPool } from '../../lib/loadgen/http1/socket-pool';
import { runLoad } from '../../lib/loadgen/run-load';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import { analyzeFile } from '../../lib/loadgen/analyze-file';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-http1-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A node:http server answering by path; it records every request it read, whole. */
async function httpServer(opts: http.ServerOptions & { keepAliveTimeout?: number } = {}) {
  const seen: Seen[] = [];
  const server = http.createServer(opts, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const p = (req.url ?? '').split('?')[0];
      if (p.endsWith('/chunked')) {
        // No Content-Length: node:http sends the body chunked, in as many chunks as writes.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"a":');
        setImmediate(() => {
          res.write('"b",');
          setImmediate(() => res.end('"c":1}'));
        });
      } else if (p.endsWith('/401')) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'unauthorized' }));
      } else if (p.endsWith('/500')) {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-length': 4 });
        res.end('oops');
      } else if (p.endsWith('/close')) {
        res.writeHead(200, { connection: 'close', 'content-length': 2 });
        res.end('{}');
      } else {
        const text = '{"accepted":1}';
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      }
    });
  });
  if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return { port, seen, server, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** An owner that records each exchange's end; `waitFor(n)` resolves when n have ended. */
function recorder() {
  const ended: { x: Exchange; status: number; sent: number }[] = [];
  let waiting: { n: number; resolve: () => void } | null = null;
  const owner: ExchangeOwner = {
    written: (x) => {
      x.sent = Math.max(0, x.sent) + 1; // counts writes: 1 normally, 2 when re-sent
    },
    done: (x, status) => {
      ended.push({ x, status, sent: x.sent });
      if (waiting && ended.length >= waiting.n) waiting.resolve();
    },
  };
  const waitFor = (n: number) =>
    new Promise<void>((resolve) => {
      if (ended.length >= n) resolve();
      else waiting = { n, resolve };
    });
  return { owner, ended, waitFor };
}

function exchange(request: Buffer, code = 0): Exchange {
  const x = new Exchange();
  x.code = code;
  x.request = request;
  return x;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const endpoint = (port: number) => ({ host: '127.0.0.1', port, tls: false });

test('GETs and POSTs the server reads whole and right: Host, Authorization, Content-Length, the JSON body', async () => {
  const srv = await httpServer();
  const rec = recorder();
  const pool = new SocketPool(endpoint(srv.port), 4, rec.owner, 30_000);
  try {
    const host = `127.0.0.1:${srv.port}`;
    const bodies = new BodyMaker({ runTag: 'http1-a', meter: 'api_calls', customers: ['cus_1', 'cüs_ü'], batch: 3, seed: 5, quantityMax: 100 });
    const posts = new IngestRequests('/v1/usage-events', host, 'secret', bodies);
    for (let n = 0; n < 6; n++) pool.dispatch(exchange(posts.make(n)));
    pool.dispatch(exchange(getRequest('/v1/customers?x=1', host, 'secret')));
    await rec.waitFor(7);
    assert.deepEqual(
      rec.ended.map((e) => e.status),
      [201, 201, 201, 201, 201, 201, 201],
    );
    const postsSeen = srv.seen.filter((s) => s.method === 'POST');
    assert.equal(postsSeen.length, 6);
    for (const s of postsSeen) {
      assert.equal(s.headers.host, host);
      assert.equal(s.headers.authorization, 'Bearer secret');
      assert.equal(s.headers['content-type'], 'application/json');
      assert.equal(Number(s.headers['content-length']), Buffer.byteLength(s.body));
      const n = Number(/"http1-a-(\d+)-0"/.exec(s.body)?.[1]);
      assert.deepEqual(JSON.parse(s.body), bodies.events(n));
    }
    const get = srv.seen.find((s) => s.method === 'GET');
    assert.equal(get?.url, '/v1/customers?x=1');
    assert.equal(pool.size <= 4, true);
  } finally {
    pool.destroy();
    await srv.close();
  }
});

test('chunked answers, a 401, a 500 and `Connection: close` are each one answer with its status; later requests still succeed', async () => {
  const srv = await httpServer();
  const rec = recorder();
  const pool = new SocketPool(endpoint(srv.port), 2, rec.owner, 30_000);
  try {
    const host = `127.0.0.1:${srv.port}`;
    const paths = ['/chunked', '/401', '/500', '/close', '/ok', '/chunked', '/close', '/ok', '/500', '/chunked', '/401', '/ok'];
    // one at a time on few connections, so each connection carries several kinds in turn
    for (const p of paths) {
      pool.dispatch(exchange(getRequest(p, host, 'k')));
      await rec.waitFor(rec.ended.length + 1);
    }
    const want: Record<string, number> = { '/chunked': 200, '/401': 401, '/500': 500, '/close': 200, '/ok': 201 };
    assert.deepEqual(
      rec.ended.map((e) => e.status),
      paths.map((p) => want[p]),
    );
    assert.deepEqual(
      srv.seen.map((s) => s.url),
      paths,
      'each request reached the server exactly once',
    );
    // and concurrently, more requests than connections: they wait for one and all get answered
    const before = rec.ended.length;
    for (let i = 0; i < 20; i++) pool.dispatch(exchange(getRequest(paths[i % paths.length], host, 'k')));
    await rec.waitFor(before + 20);
    assert.equal(srv.seen.length, paths.length + 20);
    assert.ok(pool.size <= 2);
  } finally {
    pool.destroy();
    await srv.close();
  }
});

test('a node:http server closing idle connections (keepAliveTimeout small): requests after the close succeed, each once', async () => {
  const srv = await httpServer({ keepAliveTimeout: 50 });
  const rec = recorder();
  const pool = new SocketPool(endpoint(srv.port), 2, rec.owner, 30_000);
  try {
    const req = getRequest('/ok', `127.0.0.1:${srv.port}`, 'k');
    for (let i = 0; i < 5; i++) {
      pool.dispatch(exchange(req));
      await rec.waitFor(i + 1);
      await sleep(120); // longer than the server keeps an idle connection
    }
    assert.deepEqual(
      rec.ended.map((e) => e.status),
      [201, 201, 201, 201, 201],
    );
    assert.equal(srv.seen.length, 5);
  } finally {
    pool.destroy();
    await srv.close();
  }
});

/**
 * A raw HTTP/1.1 server with no Keep-Alive hint. closeIdleMs: it closes a connection idle that long.
 * dropSecond: on every connection, the second request is read and the connection closed without an
 * answer (a server that closed it as idle just as the request came). Counts what it answered.
 */
async function rawServer(o: { closeIdleMs?: number; dropSecond?: boolean }) {
  let answered = 0;
  let dropped = 0;
  const server = net.createServer((sock) => {
    let buf = '';
    let requests = 0;
    let idle: NodeJS.Timeout | null = null;
    const armIdle = () => {
      if (o.closeIdleMs) idle = setTimeout(() => sock.end(), o.closeIdleMs);
    };
    armIdle();
    sock.on('data', (d: Buffer) => {
      if (idle) clearTimeout(idle);
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) break;
        buf = buf.slice(end + 4 + len);
        requests++;
        if (o.dropSecond && requests === 2) {
          dropped++;
          sock.destroy();
          return;
        }
        answered++;
        sock.write('HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}');
      }
      armIdle();
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    answered: () => answered,
    dropped: () => dropped,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test('a server that closes idle connections without a hint: the pool forgets them and opens new ones', async () => {
  const srv = await rawServer({ closeIdleMs: 40 });
  const rec = recorder();
  const pool = new SocketPool(endpoint(srv.port), 2, rec.owner, 30_000);
  try {
    const req = getRequest('/ok', `127.0.0.1:${srv.port}`, 'k');
    for (let i = 0; i < 4; i++) {
      pool.dispatch(exchange(req));
      await rec.waitFor(i + 1);
      await sleep(100);
    }
    assert.deepEqual(
      rec.ended.map((e) => e.status),
      [201, 201, 201, 201],
    );
    assert.equal(srv.answered(), 4);
  } finally {
    pool.destroy();
    await srv.close();
  }
});

test('a kept-alive connection closed as a request arrives: the request is sent again once, on a new connection, and answered once', async () => {
  const srv = await rawServer({ dropSecond: true });
  const rec = recorder();
  const pool = new SocketPool(endpoint(srv.port), 1, rec.owner, 30_000);
  try {
    const req = getRequest('/ok', `127.0.0.1:${srv.port}`, 'k');
    for (let i = 0; i < 4; i++) {
      pool.dispatch(exchange(req));
      await rec.waitFor(i + 1);
    }
    assert.deepEqual(
      rec.ended.map((e) => e.status),
      [201, 201, 201, 201],
    );
    // Every connection answers its first request and drops its second: requests 2-4 each went out
    // twice (second on one connection, then first on the next) and were answered once.
    assert.deepEqual(
      rec.ended.map((e) => e.sent),
      [1, 2, 2, 2],
    );
    assert.equal(srv.answered(), 4);
    assert.equal(srv.dropped(), 3);
  } finally {
    pool.destroy();
    await srv.close();
  }
});

test('a connection that never answered is not re-sent: a transport error (status 0)', async () => {
  const rude = net.createServer((sock) => sock.on('data', () => sock.destroy()));
  await new Promise<void>((r) => rude.listen(0, '127.0.0.1', () => r()));
  const rec = recorder();
  const pool = new SocketPool(endpoint((rude.address() as net.AddressInfo).port), 2, rec.owner, 30_000);
  try {
    pool.dispatch(exchange(getRequest('/ok', 'x', 'k')));
    pool.dispatch(exchange(getRequest('/ok', 'x', 'k')));
    await rec.waitFor(2);
    assert.deepEqual(
      rec.ended.map((e) => [e.status, e.sent]),
      [
        [0, 1],
        [0, 1],
      ],
    );
  } finally {
    pool.destroy();
    await new Promise<void>((r) => rude.close(() => r()));
  }
});

test('the generator against node:http answering chunked, 401 and 500, closing idle connections: each row has the status the server gave, once', async () => {
  // Answers by the request number n of the idempotency key: n % 10 == 3 -> 500, == 7 -> 401, else a
  // chunked 201; idle connections are closed after 30 ms, so at 20 requests/s most requests find
  // theirs closed.
  const statusOf = (n: number) => (n % 10 === 3 ? 500 : n % 10 === 7 ? 401 : 201);
  const byStatus = new Map<number, number>();
  let keys = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-length': 2 });
        res.end('{}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { idempotency_key: string }[] };
      keys += body.events.length;
      const n = Number(body.events[0].idempotency_key.split('-').at(-2));
      const status = statusOf(n);
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.write('{"ok":');
      setImmediate(() => res.end(status === 201 ? 'true}' : 'false}'));
    });
  });
  server.keepAliveTimeout = 30;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const out = path.join(dir, 'mixed.csv.gz');
    const res = await runLoad(
      { url, apiKey: 'k', rate: 40, batch: 2, seconds: 2, customers: ['cus_1', 'cus_2'], out, runTag: 'mixed-1', warmupSeconds: 0, warmConnections: 2 },
      undefined,
      { preflight: false },
    );
    const c = await readSampleFile(out);
    assert.equal(c.length, 40);
    const rows = new Map<number, number>();
    for (let i = 0; i < c.length; i++) {
      const n = Math.round((c.intended[i] * 20) / 1e6); // request n is intended at n / 20 s
      assert.equal(c.status[i], statusOf(n), `request ${n}`);
      rows.set(c.status[i], (rows.get(c.status[i]) ?? 0) + 1);
    }
    assert.deepEqual([...rows.entries()].sort(), [...byStatus.entries()].sort(), 'the rows hold exactly what the server answered');
    assert.deepEqual([...rows.entries()].sort(), [
      [201, 32],
      [401, 4],
      [500, 4],
    ]);
    assert.equal(keys, 80, 'every event reached the server once');
    const { analysis } = await analyzeFile(out, { durationS: 2 });
    assert.equal(analysis.ingest.failed, 8);
    assert.equal(res.summary.ok, 32);
    assert.equal(res.summary.dropped, 0);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
