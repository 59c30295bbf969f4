// A minimal HTTP/1.1 responder on loopback: answers every request at once with a fixed `201 {}` on a
// keep-alive connection, parsing only the end of the headers and Content-Length. Two users: the
// generator's JIT warm-up (warmup.ts), and the benchmark's sink (bench/sink.ts), where it must be the
// last thing to saturate. node:net rather than node:http for exactly that reason.
import net from 'node:net';

const RESPONSE = Buffer.from('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}');
const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

export interface Responder {
  port: number;
  /** Requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

export function startResponder(host = '127.0.0.1'): Promise<Responder> {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let need = -1; // body bytes still to skip for the current request; -1 = reading headers
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      let answers = 0;
      for (;;) {
        if (need < 0) {
          const end = buf.indexOf(HEADER_END);
          if (end < 0) break;
          const m = CONTENT_LENGTH.exec(buf.toString('latin1', 0, end + 2));
          need = m ? Number(m[1]) : 0;
          buf = buf.subarray(end + 4);
        }
        if (buf.length < need) {
          need -= buf.length;
          buf = Buffer.alloc(0);
          break;
        }
        buf = buf.subarray(need);
        need = -1;
        answers++;
      }
      if (answers) {
        requests += answers;
        sock.write(answers === 1 ? RESPONSE : Buffer.concat(Array.from({ length: answers }, () => RESPONSE)));
      }
    });
    sock.on('error', () => undefined);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: a burst of new connections must not overflow it (a dropped SYN costs 1 s).
    server.listen({ port: 0, host, backlog: 4096 }, () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        port,
        requests: () => requests,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
