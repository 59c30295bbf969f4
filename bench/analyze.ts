// `npm run bench:analyze`: `rig analyze` over a generated 2M-row sample stream (600 s at ~3,333
// requests/s, a probe, a few drops, failures and a freeze). Target: >= 1M rows/s. Prints a table; it
// is a benchmark, not a test: nothing here asserts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { analyzeSamples } from '../lib/protocol/analysis';
import { evaluateRun } from '../lib/protocol/evaluate';
import { readSampleFile } from '../lib/loadgen/sample-reader';
import { SampleWriter } from '../lib/loadgen/sample-writer';
import { intIn } from '../lib/loadgen/prng';

const ROWS = Number(process.env.ROWS ?? 2_000_000);
const SECONDS = 600;
const REPEATS = Number(process.env.REPEATS ?? 3);

async function generate(file: string): Promise<void> {
  const w = new SampleWriter(file);
  const probeEvery = 1000; // a probe row every 1,000 rows: ~5 probe requests/s
  const rate = ROWS / SECONDS;
  for (let n = 0; n < ROWS; n++) {
    const intended = Math.floor((n * 1e6) / rate);
    const r = intIn(42, n, 0, 1_000_000);
    if (n % probeEvery === 7) {
      w.row(1 + (n % 3), intended, intended + 100, intended + 3000 + (r % 400_000), 200, 0, 0);
      continue;
    }
    if (r < 50) {
      w.row(0, intended, 0, 0, -1, 10, 0);
      continue;
    }
    const lag = r % 900;
    const frozen = intended >= 300_000_000 && intended < 301_000_000;
    const latency = frozen ? 301_000_000 - intended : 4000 + (r % 6000) + (r % 1000 === 0 ? 80_000 : 0);
    w.row(0, intended, intended + lag, intended + lag + latency, r % 5000 === 1 ? 500 : 201, 10, 10 + (r % 500));
    if ((n & 0xffff) === 0) await new Promise((res) => setImmediate(res)); // let gzip drain
  }
  await w.close();
}

function ms(t: number): string {
  return `${t.toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bench-analyze-'));
  const file = path.join(dir, 'samples.csv.gz');
  try {
    let t = performance.now();
    await generate(file);
    const genMs = performance.now() - t;
    const size = fs.statSync(file).size;
    console.log(`generated ${ROWS.toLocaleString('en-US')} rows (${(size / 1e6).toFixed(1)} MB gzip) in ${ms(genMs)}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
    console.log('| run | read + parse | statistics + gates | total | rows/s |');
    console.log('|---|---|---|---|---|');
    for (let i = 1; i <= REPEATS; i++) {
      t = performance.now();
      const cols = await readSampleFile(file);
      const readMs = performance.now() - t;
      const t2 = performance.now();
      const { report } = evaluateRun(analyzeSamples(cols));
      const anMs = performance.now() - t2;
      const total = readMs + anMs;
      if (report.samples <= 0) throw new Error('no samples analysed');
      console.log(`| in-process ${i} | ${ms(readMs)} | ${ms(anMs)} | ${ms(total)} | ${Math.round(cols.length / (total / 1000)).toLocaleString('en-US')} |`);
    }
    // The command a person runs, start-up (node + tsx) included.
    for (let i = 1; i <= REPEATS; i++) {
      t = performance.now();
      const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'rig.cjs'), 'analyze', file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
      const total = performance.now() - t;
      if (r.status !== 0 && r.status !== 1) throw new Error(`rig analyze exited ${r.status}: ${r.stderr}`);
      const j = JSON.parse(r.stdout) as { samples: number; freeze_seconds: number[]; p99_ms: number };
      console.log(`| rig analyze --json ${i} | | | ${ms(total)} | ${Math.round(ROWS / (total / 1000)).toLocaleString('en-US')} |`);
      if (i === REPEATS) console.log(`\n(rig analyze found ${j.samples.toLocaleString('en-US')} ingest samples, p99 ${j.p99_ms} ms, freeze-seconds [${j.freeze_seconds.join(', ')}])`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
