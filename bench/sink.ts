// The benchmark's loopback sink, run as its own process so its CPU is charged to no generator: the
// minimal responder of lib/loadgen/loopback-responder.ts (fixed `201 {}`, keep-alive).
// Prints {"port":N} on stdout when listening; exits when its stdin closes (its parent is gone).
import { startResponder } from '../lib/loadgen/loopback-responder';

startResponder()
  .then((r) => {
    process.stdout.write(`${JSON.stringify({ port: r.port })}\n`);
    process.stdin.on('end', () => {
      process.stderr.write(`sink: ${r.requests()} requests\n`);
      process.exit(0);
    });
    process.stdin.resume();
  })
  .catch((err: unknown) => {
    process.stderr.write(`sink: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
