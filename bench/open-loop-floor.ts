// The floor of any open loop in Node on this host, for bench:loadgen: one keep-alive socket, a timer
// for each due time (rounded up to the millisecond, as the rig's), one prebuilt request written per
// due request, replies counted by bytes in an `onread` callback. No body, no parser, no stream, no
// statistics: what is left is the cost of waking up for each send and each reply. The rig cannot cost
// less than this at a rate where every request has its own due time; a tool that batches its sends
// (autocannon's overallRate is a per-connection budget per second) can.
// Usage: tsx bench/open-loop-floor.ts PORT RATE SECONDS  ->  one JSON line.
import net from 'node:net';

const [port, rate, seconds] = process.argv.slice(2).map(Number);
const REQUEST = Buffer.from('POST /v1/usage-events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
// bench/sink.ts answers every request with these bytes (lib/loadgen/loopback-responder.ts).
const ANSWER_BYTES = Buffer.byteLength('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}');
const total = Math.round(rate * seconds);
const intervalMs = 1000 / rate;
let sent = 0;
let received = 0;
let t0 = 0;
let cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };

const sock = net.connect({
  port,
  host: '127.0.0.1',
  noDelay: true,
  onread: {
    buffer: Buffer.alloc(64 * 1024),
    callback: (n: number) => {
      received += n;
      if (received >= total * ANSWER_BYTES) finish();
      return true;
    },
  },
});
sock.on('connect', () => {
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  tick();
});

function tick(): void {
  const now = performance.now() - t0;
  while (sent < total && sent * intervalMs <= now) {
    sock.write(REQUEST);
    sent++;
  }
  if (sent < total) setTimeout(tick, Math.max(1, Math.ceil(sent * intervalMs - (performance.now() - t0))));
}

function finish(): void {
  const c = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ requests: total, elapsed_s: (performance.now() - t0) / 1000, cpu_us_per_request: (c.user + c.system) / total })}\n`);
  process.exit(0);
}

setTimeout(() => {
  process.stderr.write(`open-loop-floor: ${received} of ${total * ANSWER_BYTES} answer bytes after ${seconds + 10} s\n`);
  process.exit(1);
}, (seconds + 10) * 1000).unref();
