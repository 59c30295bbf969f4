// `npm run bench:profile`: where the generator's child spends its CPU. Runs the rig's open loop
// against the bench sink (its own process) at each rate with the child under `--cpu-prof`, then
// prints the top frames by self time (share of the child's busy samples; idle left out). The child's
// own JIT warm-up is off here (warmupSeconds 0): at 1k req/s its second of closed loop against a
// loopback responder would outweigh the measured run in the profile.
// Knobs: RATES=1000,10000 BENCH_SECONDS=10 TOP=15.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad } from '../lib/loadgen/run-load';
import { startSink } from './sink-process';

const RATES = (process.env.RATES ?? '1000,10000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOP = Number(process.env.TOP ?? 15);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}


/**
 * Self time per frame (function, file, line), in µs, from the profile's samples taken in the last
 * `windowUs` of the profile: the measured run and its drain, not the child's start-up (module
 * loading and tsx's compilation, which would otherwise top the list at low rates).
 */
export function topFrames(p: Profile, windowUs: number): { frame: string; us: number }[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const from = p.endTime - windowUs;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from) continue;
    const n = byId.get(p.samples[i]);
    if (!n) continue;
    const f = n.callFrame;
    const file = f.url ? f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/(lib|bench)\//, '$1/') : '';
    const key = file ? `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}` : f.functionName;
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return [...self.entries()].map(([frame, us]) => ({ frame, us })).sort((a, b) => b.us - a.us);
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-profile-'));
  const sink = await startSink();
  const url = `http://127.0.0.1:${sink.port}`;
  console.log(`node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${SECONDS} s per rate\n`);
  try {
    for (const rate of RATES) {
      const profDir = path.join(dir, String(rate));
      process.env.RIG_LOADGEN_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profDir}`;
      const res = await runLoad(
        { url, apiKey: 'bench', rate, batch: 1, seconds: SECONDS, customers: ['cus_0001', 'cus_0002'], out: path.join(dir, `${rate}.csv.gz`), warmupSeconds: 0 },
        undefined,
        { preflight: false },
      );
      const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile in ${profDir}`);
      const frames = topFrames(JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8')) as Profile, res.summary.elapsed_s * 1e6);
      const total = frames.reduce((s, f) => s + f.us, 0);
      const idle = frames.find((f) => f.frame === '(idle)')?.us ?? 0;
      const busy = total - idle;
      const s = res.summary;
      console.log(`### ${rate.toLocaleString('en-US')} req/s: sent ${s.sent}, dropped ${s.dropped}, CPU ${s.cpu_us_per_request?.toFixed(1)} µs/request, busy ${((busy / total) * 100).toFixed(1)} % of the measured run's samples\n`);
      console.log('| self % of busy | self ms | frame |\n|---:|---:|---|');
      for (const f of frames.filter((x) => x.frame !== '(idle)').slice(0, TOP)) console.log(`| ${((f.us / busy) * 100).toFixed(1)} | ${(f.us / 1000).toFixed(0)} | ${f.frame} |`);
      console.log('');
    }
  } finally {
    delete process.env.RIG_LOADGEN_NODE_ARGS;
    sink.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
