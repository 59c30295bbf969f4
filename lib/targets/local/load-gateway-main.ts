// The load nodes' gateway (issue 37): one detached process on this machine's side of the load nodes'
// veth pairs. A node's namespace has no route but its own pair, so what a node must reach on this
// machine is offered on each pair's host end: every relay listens on <host end>:<port> and forwards
// to <host>:<port> (the service, Temporal: the same port, so a node reaches 127.0.0.1:P as
// <host end>:P), and the control host's clock answers `GET /clock` on <host end>:<clockPort>. It
// outlives the worker that started it, is marked and written to the ledger (load-workers.ts), and
// stops on SIGTERM. Argument: one JSON object, GatewayConfig.
import net from 'node:net';
import { startClockServer } from '../../loadgen/clock-offset';

export interface GatewayConfig {
  /** Each node pair's host end. */
  listen: string[];
  /** Where each relay forwards (it listens on the same port at every host end). */
  relays: Array<{ host: string; port: number }>;
  clockPort: number;
}

function relay(listenHost: string, to: { host: string; port: number }): Promise<void> {
  const server = net.createServer((inbound) => {
    const outbound = net.connect(to.port, to.host);
    // A relay adds no Nagle wait to a small request or answer (the latency measured is the service's).
    inbound.setNoDelay(true);
    outbound.setNoDelay(true);
    inbound.pipe(outbound).pipe(inbound);
    // Either side gone: the other is closed too (a connection is never half kept).
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(to.port, listenHost, () => resolve());
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as GatewayConfig;
  for (const ip of config.listen) {
    for (const r of config.relays) await relay(ip, r);
    await startClockServer({ host: ip, port: config.clockPort });
  }
  console.log(JSON.stringify({ ready: true, listen: config.listen, relays: config.relays, clockPort: config.clockPort }));
  process.on('SIGTERM', () => process.exit(0));
}

main().catch((err: Error) => {
  console.error(`load gateway: ${err.message}`);
  process.exit(1);
});
