// `npx tsx bench/arrivals.ts`: what computing request k's intended time costs, per shape
// (lib/protocol/arrivals.ts), beside the constant schedule's one-line formula the generator has always
// used (generator.ts intendedUs): ns per request, in order of k as the generator asks, and the cost of
// building each schedule (its count) for a 600-s repeat. Compare the shapes' ns with the generator's
// CPU per request at the same rate (docs/benchmarks.md: tens of µs): the schedule is a rounding error
// of it. A benchmark, not a test: nothing asserts; the host's load moves every figure.
// Knobs: RATE=10000 (requests/s) SECONDS=600.
import os from 'node:os';
import { arrivalSchedule, type Arrivals } from '../lib/protocol/arrivals';

const RATE = Number(process.env.RATE ?? 10_000);
const SECONDS = Number(process.env.SECONDS ?? 600);
const batch = 1;

const shapes: Array<[string, Arrivals | null]> = [
  ['constant (schedule object)', null],
  ['poisson', { shape: 'poisson', seed: 1 }],
  ['ramp', { shape: 'ramp', to: RATE * 2, over: SECONDS / 2 }],
  ['spike', { shape: 'spike', peak: RATE * 5, at: SECONDS / 3, for: 30 }],
  ['diurnal', { shape: 'diurnal', max: RATE * 3, period: SECONDS / 2 }],
];

function time(fn: () => number): { ns: number; sink: number } {
  const t0 = process.hrtime.bigint();
  const sink = fn();
  return { ns: Number(process.hrtime.bigint() - t0), sink };
}

const rows: string[][] = [];
let sink = 0;
// The generator's own formula, inline, as the baseline.
{
  const total = Math.ceil(RATE * SECONDS);
  const r = time(() => {
    let x = 0;
    for (let k = 0; k < total; k++) x += Math.floor((k * 1e6) / RATE);
    return x;
  });
  sink += r.sink;
  rows.push(['constant (generator formula)', String(total), '—', (r.ns / total).toFixed(1)]);
}
for (const [name, a] of shapes) {
  const b = time(() => arrivalSchedule({ rate: RATE, batch, seconds: SECONDS, arrivals: a }).count);
  const s = arrivalSchedule({ rate: RATE, batch, seconds: SECONDS, arrivals: a });
  const r = time(() => {
    let x = 0;
    for (let k = 0; k < s.count; k++) x += s.at(k);
    return x;
  });
  sink += r.sink;
  rows.push([name, String(s.count), (b.ns / 1e6).toFixed(0), (r.ns / s.count).toFixed(1)]);
}
const head = ['shape', 'requests', 'build ms', 'ns / request'];
const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => `| ${r.map((c, i) => (i ? c.padStart(w[i]) : c.padEnd(w[i]))).join(' | ')} |`;
console.log(`base rate ${RATE} requests/s, ${SECONDS} s; load average ${os.loadavg()[0].toFixed(1)}`);
console.log(line(head));
console.log(`|${w.map((x, i) => (i ? `${'-'.repeat(x + 1)}:` : '-'.repeat(x + 2))).join('|')}|`);
for (const r of rows) console.log(line(r));
if (sink === 42) console.log('');
