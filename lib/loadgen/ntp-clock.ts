// A load node's clock read against a time server over SNTP (issue 37), for a rig whose nodes cannot
// reach the control host's `/clock` (the aws target: lib/targets/aws/load-nodes.ts says why they read
// the Amazon Time Sync Service instead). The arithmetic and the refusals of a bad reply are
// lib/protocol/ntp-time.ts's; here only the UDP exchange, and a server for tests (what Amazon Time
// Sync is to a node, played by this machine's clock).
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { ClockReading } from '../protocol/clock-offset';
import { answers, ntpExchange, ntpReading, ntpRequest, NTP_PACKET_BYTES, parseNtpReply, writeNtpTimestamp, type NtpExchange } from '../protocol/ntp-time';
import { clockNowMs } from './clock-offset';

/** How long one exchange waits for its reply: a link-local server answers in well under a millisecond. */
const REPLY_TIMEOUT_MS = 2000;

/** `ntp://host[:port]` (port 123 when absent) as host and port. */
export function ntpServerOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  if (u.protocol !== 'ntp:' || !u.hostname) throw new Error(`not a time server URL (ntp://host[:port]): ${url}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : 123 };
}

/** Measures this host's clock against the NTP server at `url` over `exchanges` requests, one at a time. */
export async function measureNtpOffset(url: string, exchanges = 8): Promise<ClockReading> {
  const { host, port } = ntpServerOf(url);
  const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  try {
    const done: NtpExchange[] = [];
    for (let i = 0; i < exchanges; i++) done.push(await exchange(socket, host, port, url));
    return ntpReading(done, url);
  } finally {
    socket.close();
  }
}

function exchange(socket: dgram.Socket, host: string, port: number, url: string): Promise<NtpExchange> {
  return new Promise<NtpExchange>((resolve, reject) => {
    const sentMs = clockNowMs();
    const request = ntpRequest(sentMs);
    const finish = (fn: () => void) => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('error', onError);
      fn();
    };
    const onMessage = (msg: Uint8Array) => {
      const receivedMs = clockNowMs();
      try {
        const reply = parseNtpReply(new Uint8Array(msg));
        // A late answer to an earlier request (or anyone else's) is not this exchange's: wait on.
        if (!answers(request, reply)) return;
        const e = ntpExchange(sentMs, receivedMs, reply);
        finish(() => resolve(e));
      } catch (err) {
        finish(() => reject(new Error(`the time server at ${url}: ${(err as Error).message}`)));
      }
    };
    const onError = (err: Error) => finish(() => reject(new Error(`the time server at ${url}: ${err.message}`)));
    const timer = setTimeout(() => finish(() => reject(new Error(`the time server at ${url} did not answer within ${REPLY_TIMEOUT_MS / 1000} s`))), REPLY_TIMEOUT_MS);
    socket.on('message', onMessage);
    socket.on('error', onError);
    socket.send(request, port, host);
  });
}

export interface NtpServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Answers SNTP requests with this host's clock (plus `skewMs`) at stratum 2, root delay and dispersion
 * 0: for tests, the time server a rig's nodes share.
 */
export async function startNtpServer(opts: { host?: string; skewMs?: number } = {}): Promise<NtpServer> {
  const host = opts.host ?? '127.0.0.1';
  const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  socket.on('message', (msg, rinfo) => {
    if (msg.length < NTP_PACKET_BYTES) return;
    const receiveMs = clockNowMs() + (opts.skewMs ?? 0);
    const out = new Uint8Array(NTP_PACKET_BYTES);
    const v = new DataView(out.buffer);
    v.setUint8(0, (0 << 6) | (4 << 3) | 4);
    v.setUint8(1, 2);
    out.set(new Uint8Array(msg.buffer, msg.byteOffset + 40, 8), 24); // origin: the request's transmit time
    writeNtpTimestamp(v, 32, receiveMs);
    writeNtpTimestamp(v, 40, clockNowMs() + (opts.skewMs ?? 0));
    socket.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => resolve());
  });
  const a = socket.address() as AddressInfo;
  return {
    url: `ntp://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
