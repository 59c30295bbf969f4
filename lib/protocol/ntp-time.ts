// One SNTP exchange's arithmetic (RFC 4330, the NTP packet of RFC 5905), for a load node that reads its
// clock against a time server rather than the control host's `/clock` (issue 37: an AWS rig's load
// nodes read theirs against the Amazon Time Sync Service, lib/targets/aws/load-nodes.ts says why).
// Pure: the exchange itself (UDP) is lib/loadgen/ntp-clock.ts. Bytes through DataView, never Buffer.
//
// A reply carries the server's receive and transmit times; with this node's send and receive times
// the exchange becomes a ClockSample (clock-offset.ts) whose control time is the midpoint of the
// server's two, so the shortest round trip is kept and its half is the uncertainty, as for `/clock`.
// The server's own distance from UTC (half its root delay plus its root dispersion) is added to
// that uncertainty: a node is held to what it can show against the reference, not the server.
import { clockReading, type ClockReading, type ClockSample } from './clock-offset';

export const NTP_PACKET_BYTES = 48;
/** Seconds from the NTP era's start (1900-01-01) to the Unix epoch. */
export const NTP_UNIX_OFFSET_S = 2_208_988_800;
const TWO_32 = 2 ** 32;

/** An NTP timestamp (seconds since 1900, 32.32 fixed point) at `at`, as ms since the Unix epoch. Era 1 (from 2036) where the seconds have wrapped. */
export function readNtpTimestamp(v: DataView, at: number): number {
  let seconds = v.getUint32(at);
  // Era 0 ends in February 2036; a seconds field below 2^31 is era 1 (RFC 4330, section 3).
  if (seconds < 2 ** 31) seconds += TWO_32;
  return (seconds - NTP_UNIX_OFFSET_S) * 1000 + (v.getUint32(at + 4) / TWO_32) * 1000;
}

export function writeNtpTimestamp(v: DataView, at: number, ms: number): void {
  const whole = Math.floor(ms / 1000);
  const fraction = Math.floor(((ms - whole * 1000) / 1000) * TWO_32);
  v.setUint32(at, (whole + NTP_UNIX_OFFSET_S) % TWO_32);
  v.setUint32(at + 4, Math.min(fraction, TWO_32 - 1));
}

/** A client's request (LI 0, version 4, mode 3) carrying `sentMs` as its transmit time, which the server echoes as the reply's origin. */
export function ntpRequest(sentMs: number): Uint8Array {
  const b = new Uint8Array(NTP_PACKET_BYTES);
  const v = new DataView(b.buffer);
  v.setUint8(0, (0 << 6) | (4 << 3) | 3);
  writeNtpTimestamp(v, 40, sentMs);
  return b;
}

export interface NtpReply {
  leap: number;
  mode: number;
  stratum: number;
  rootDelayMs: number;
  rootDispersionMs: number;
  /** The request's transmit time as the server echoed it (the raw 8 bytes: a reply is matched by them). */
  origin: Uint8Array;
  receiveMs: number;
  transmitMs: number;
}

/** A server's reply (the 48-byte header; extension fields and MAC, if any, are ignored). */
export function parseNtpReply(bytes: Uint8Array): NtpReply {
  if (bytes.length < NTP_PACKET_BYTES) throw new Error(`an NTP reply has at least ${NTP_PACKET_BYTES} bytes, this one ${bytes.length}`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const first = v.getUint8(0);
  // Root delay and dispersion: 16.16 fixed-point seconds.
  return {
    leap: first >> 6,
    mode: first & 7,
    stratum: v.getUint8(1),
    rootDelayMs: (v.getInt32(4) / 65536) * 1000,
    rootDispersionMs: (v.getUint32(8) / 65536) * 1000,
    origin: bytes.slice(24, 32),
    receiveMs: readNtpTimestamp(v, 32),
    transmitMs: readNtpTimestamp(v, 40),
  };
}

/** Whether `reply` answers `request` (its origin is the request's transmit time, byte for byte). */
export function answers(request: Uint8Array, reply: NtpReply): boolean {
  return reply.origin.every((b, i) => b === request[40 + i]);
}

export interface NtpExchange {
  sample: ClockSample;
  /** The server's own distance from the reference: half its root delay plus its root dispersion, ms. */
  serverErrorMs: number;
}

/** One exchange from a reply: refused (throws, naming why) when the server cannot vouch for its time. */
export function ntpExchange(sentMs: number, receivedMs: number, reply: NtpReply): NtpExchange {
  if (reply.mode !== 4) throw new Error(`the time server answered in NTP mode ${reply.mode}, not 4 (server)`);
  // Stratum 0 is a kiss-o'-death (the server refuses to serve); leap 3 says its clock is not synchronised.
  if (reply.stratum === 0 || reply.stratum > 15) throw new Error(`the time server answered stratum ${reply.stratum} (kiss-o'-death or unsynchronised)`);
  if (reply.leap === 3) throw new Error('the time server says its own clock is not synchronised (leap indicator 3)');
  return {
    sample: { sentMs, receivedMs, controlMs: (reply.receiveMs + reply.transmitMs) / 2 },
    serverErrorMs: Math.abs(reply.rootDelayMs) / 2 + reply.rootDispersionMs,
  };
}

/** The reading from a node's exchanges with `reference`: the shortest round trip's, its uncertainty widened by that server's own error. */
export function ntpReading(exchanges: readonly NtpExchange[], reference: string): ClockReading {
  if (exchanges.length === 0) throw new RangeError('no NTP exchange to read an offset from');
  const rtt = (e: NtpExchange) => e.sample.receivedMs - e.sample.sentMs;
  const best = exchanges.reduce((a, e) => (rtt(e) < rtt(a) ? e : a));
  const r = clockReading([best.sample]);
  return { offset_ms: r.offset_ms, uncertainty_ms: r.uncertainty_ms + best.serverErrorMs, exchanges: exchanges.length, reference };
}
