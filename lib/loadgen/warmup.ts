// The generator's JIT warm-up, against itself rather than the target. A fresh Node process runs its
// first few thousand requests in the interpreter, several times slower than once optimised; at 10k
// requests/s that first second overloads the generator, replies are read late, slots run out and the
// stream records drops that belong to the instrument, not the server. So before the measured run the
// child drives the same Generator code (closed loop) for a moment against a loopback responder of its
// own. The target sees nothing of it; the sample stream of the warm-up is thrown away.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Generator } from './generator';
import { startResponder } from './loopback-responder';
import type { ResolvedLoadOptions } from './options';

export async function warmUp(o: ResolvedLoadOptions, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const responder = await startResponder();
  const out = path.join(os.tmpdir(), `rig-warmup-${process.pid}-${Date.now()}.csv.gz`);
  try {
    const workers = Math.max(1, Math.min(32, o.maxInFlight));
    const gen = new Generator(
      { ...o, url: `http://127.0.0.1:${responder.port}`, mode: 'closed', workers, maxInFlight: workers, warmConnections: workers, seconds, probeRate: 0, out, drainSeconds: 1, graceSeconds: 0 },
      'warm-up',
      () => undefined,
    );
    await gen.run();
  } finally {
    await responder.close();
    fs.rmSync(out, { force: true });
  }
}
