// The generator's JIT warm-up, against itself rather than the target. A fresh Node process runs its
// first few thousand requests in the interpreter, several times slower than once optimised; at 10k
// requests/s that first second overloads the generator, replies are read late, slots run out and the
// stream records drops that belong to the instrument, not the server. So before the measured run the
// child drives the same Generator code for a moment against a loopback responder of its own: half the
// time as a closed loop (the request path as fast as it goes), half as an open loop at 5k requests/s
// (the schedule's own path: its timer ticks, Node's timer lists, a tick's batch of sends). Without the
// second half the measured run's schedule ran in the interpreter for its first seconds, and at 200
// requests/s for the whole run (a function called 200 times a second takes long to be optimised):
// that cost 10-25 % more CPU per request at 200 requests/s. The target sees nothing of it; the sample
// streams of the warm-up are thrown away.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Generator } from './generator';
import { startResponder } from './loopback-responder';
import type { ResolvedLoadOptions } from './options';

/** The open half's rate: above 1k requests/s, so each tick sends a batch, as at the rates that need it most. */
const OPEN_WARMUP_RPS = 5000;

export async function warmUp(o: ResolvedLoadOptions, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const responder = await startResponder();
  const out = path.join(os.tmpdir(), `rig-warmup-${process.pid}-${Date.now()}.csv.gz`);
  try {
    const workers = Math.max(1, Math.min(32, o.maxInFlight));
    // Never the measured run's start instant (a load node's): the warm-up starts at once, and is over
    // before the instant comes.
    const base = { ...o, url: `http://127.0.0.1:${responder.port}`, seconds: Math.max(0.5, seconds / 2), probeRate: 0, out, drainSeconds: 1, graceSeconds: 0, startAtMs: 0, arrivals: null, tenants: null };
    await new Generator({ ...base, mode: 'closed', workers, maxInFlight: workers, warmConnections: workers }, 'warm-up', () => undefined).run();
    const rate = OPEN_WARMUP_RPS;
    await new Generator({ ...base, mode: 'open', rate: rate * o.batch, requestRate: rate, maxInFlight: 256, warmConnections: 16 }, 'warm-up', () => undefined).run();
  } finally {
    await responder.close();
    fs.rmSync(out, { force: true });
  }
}
