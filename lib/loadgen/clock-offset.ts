// The clock exchange between a load node and the control host (issue 37): the control host answers
// `GET /clock` with its clock (startClockServer); a node asks a few times and keeps the exchange with
// the shortest round trip (lib/protocol/clock-offset.ts judges it). Times are ms since the epoch with
// sub-ms precision (performance.timeOrigin + performance.now(): Date.now() is whole ms, and the bound
// a node is held to can be a few ms).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { clockReading, type ClockReading, type ClockSample } from '../protocol/clock-offset';

/** This host's clock, ms since the epoch, sub-ms. */
export function clockNowMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface ClockServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves this host's clock on `GET /clock` as `{"ms": <ms since the epoch>}`. `skewMs` (tests: a host
 * whose clock is off) is added to every answer.
 */
export async function startClockServer(opts: { host?: string; port?: number; skewMs?: number } = {}): Promise<ClockServer> {
  const skew = opts.skewMs ?? 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/clock') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.stringify({ ms: clockNowMs() + skew });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}/clock`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Measures this host's clock against the control host's at `url` (its `/clock`), over `exchanges` requests on one connection. */
export async function measureClockOffset(url: string, exchanges = 8): Promise<ClockReading> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const samples: ClockSample[] = [];
    for (let i = 0; i < exchanges; i++) {
      const sentMs = clockNowMs();
      const controlMs = await new Promise<number>((resolve, reject) => {
        const req = http.get(url, { agent, timeout: 5000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => {
            const ms = (JSON.parse(body) as { ms?: unknown }).ms;
            if (res.statusCode !== 200 || typeof ms !== 'number') reject(new Error(`the control host's clock at ${url} answered ${res.statusCode}: ${body.slice(0, 100)}`));
            else resolve(ms);
          });
        });
        req.on('timeout', () => req.destroy(new Error(`the control host's clock at ${url} did not answer within 5 s`)));
        req.on('error', reject);
      });
      samples.push({ sentMs, receivedMs: clockNowMs(), controlMs });
    }
    return clockReading(samples);
  } finally {
    agent.destroy();
  }
}
