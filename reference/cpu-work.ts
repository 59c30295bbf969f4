// The CPU-slowed build's switch (HC_ADDED_CPU_US, issue 45): every data request does N microseconds of
// CPU work on the event loop before its own. Work, not a sleep: it holds the event loop as a slower
// code path would, so it adds to each request's service time and takes from the ceiling.
//
// A fixed number of iterations of a small integer kernel, calibrated once at start-up: the kernel is
// timed over many short trials and the fastest is kept (a trial the scheduler did not interrupt; on a
// busy host most are), so the loop then does N µs of this CPU's work per request. The work, not the
// wall time, is what is fixed: on a host where the service loses its core the request takes longer,
// as a real CPU regression would. Why not spin until a clock says N µs: the thread's own CPU clock is
// not readable on Node 20 (process.cpuUsage counts every thread of the process, V8's compiler and GC
// helpers included), and a wall clock would stop the work early whenever the thread is preempted.
// Measured on this 2-core host (busy, load 4-8): a 50/100/200/1000-µs loop took 50/100/199/1027 µs of
// wall and 52/101/201/1026 µs of process CPU at the median. bench/switches.ts measures what it adds.

let sink = 0;

/** `iterations` steps of xorshift32: a dependent chain the JIT cannot fold or skip. */
function kernel(iterations: number): void {
  let x = sink | 1;
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  sink = x;
}

const nowUs = (): number => Number(process.hrtime.bigint()) / 1e3;

export interface CpuWorkCalibration {
  /** Kernel iterations per µs of the fastest trial. */
  iterationsPerUs: number;
  trials: number;
}

/** Times the kernel (after warming the JIT): iterations per µs of the fastest of `trials` short trials. */
export function calibrateCpuWork(trials = 40, iterationsPerTrial = 20_000): CpuWorkCalibration {
  for (let i = 0; i < 20; i++) kernel(iterationsPerTrial); // warm-up: the optimized loop is what runs per request
  let best = 0;
  for (let t = 0; t < trials; t++) {
    const a = nowUs();
    kernel(iterationsPerTrial);
    const took = nowUs() - a;
    if (took > 0) best = Math.max(best, iterationsPerTrial / took);
  }
  if (!(best > 0)) throw new Error('the CPU work could not be calibrated: the clock did not move');
  return { iterationsPerUs: best, trials };
}

/** N µs of CPU work, as calibrated. */
export class CpuWork {
  private readonly iterations: number;

  constructor(
    readonly us: number,
    readonly calibration: CpuWorkCalibration = calibrateCpuWork(),
  ) {
    this.iterations = Math.round(us * calibration.iterationsPerUs);
  }

  run(): void {
    kernel(this.iterations);
  }
}
