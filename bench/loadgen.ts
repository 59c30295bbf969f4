// `npm run bench:loadgen`: the rig's load generator against a minimal loopback sink, at 1k, 5k, 10k
// and 20k requests/s for 20 s each, side by side with autocannon at the same rates and Debian's wrk
// (closed loop, its maximum). Prints tables; it is a benchmark, not a test: nothing here asserts.
//
// Per run: delivered rate, drops, schedule lag (sent - intended) p50/p99, latency p50/p99, and the
// generator's CPU per request (user + system of its whole process, all threads, from the start of the
// measured run to its end; start-up and warm-up excluded, for every tool alike).
// Targets (issue #3): at 10k req/s 0 drops, delivered >= 99.5 % of offered, schedule-lag p99 <= 2 ms,
// CPU per request no higher than autocannon's.
//
// Knobs: RATES=1000,5000 BENCH_SECONDS=20 TOOLS=rig,autocannon,wrk BATCH=1.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { runLoad } from '../lib/loadgen/run-load';

const RATES = (process.env.RATES ?? '1000,5000,10000,20000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const TOOLS = new Set((process.env.TOOLS ?? 'rig,autocannon,wrk').split(','));
const BATCH = Number(process.env.BATCH ?? 1);
const AUTOCANNON_CONNECTIONS = 100;
const WRK_CONNECTIONS = 100;

interface Row {
  tool: string;
  offered: number;
  delivered: number;
  drops: string;
  lag: string;
  latency: string;
  cpu: number | null;
  note?: string;
}

const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(2));

async function startSink(): Promise<{ port: number; stop: () => void }> {
  const sink = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'sink.ts')], { stdio: ['pipe', 'pipe', 'ignore'] });
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: sink.stdout }).once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
    sink.once('exit', () => reject(new Error('the sink exited')));
  });
  return { port, stop: () => sink.stdin.end() };
}

function autocannon(url: string, rate: number, seconds: number): Record<string, number> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'autocannon-runner.ts'), url, String(rate), String(seconds), String(AUTOCANNON_CONNECTIONS), '200'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`autocannon: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Record<string, number>;
}

/** wrk's own CPU: run under sh, whose `times` builtin reports its children's user and system time. */
function wrk(url: string, seconds: number, bodyFile: string): { rps: number; p50: string; p99: string; cpuUs: number; requests: number } {
  const script = path.join(path.dirname(bodyFile), 'wrk.lua');
  fs.writeFileSync(script, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer bench"\nwrk.body = io.open("${bodyFile}"):read("*a")\n`);
  const r = spawnSync('sh', ['-c', `wrk -t1 -c${WRK_CONNECTIONS} -d${seconds}s --latency -s ${script} ${url} && times`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk: ${r.stderr || r.stdout}`);
  const out = r.stdout;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1] ?? '—';
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1] ?? '—';
  const times = out.trim().split('\n').slice(-1)[0]; // children's "user system", e.g. 0m3.120s 0m9.870s
  const secs = [...times.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { rps, p50, p99, cpuUs: ((secs[0] ?? 0) + (secs[1] ?? 0)) * 1e6, requests };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bench-loadgen-'));
  const hasWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
  if (TOOLS.has('wrk') && !hasWrk) {
    console.error('wrk is not installed: apt-get install -y wrk (or TOOLS=rig,autocannon to bench without it)');
    process.exit(2);
  }
  const sink = await startSink();
  const url = `http://127.0.0.1:${sink.port}`;
  const bodyFile = path.join(dir, 'body.json');
  fs.writeFileSync(bodyFile, JSON.stringify({ events: [{ customer_id: 'cus_0001', meter: 'api_calls', quantity: 1, idempotency_key: 'x'.repeat(110) }] }));
  const rows: Row[] = [];
  try {
    console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average at start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`sink: bench/sink.ts (its own process); ${SECONDS} s per run; batch ${BATCH}; autocannon ${AUTOCANNON_CONNECTIONS} connections; wrk -t1 -c${WRK_CONNECTIONS}\n`);
    // Warm the sink (its JIT) before anything is measured, the same for every tool.
    autocannon(url, 0, 3);
    if (TOOLS.has('wrk')) {
      const w = wrk(url, SECONDS, bodyFile);
      rows.push({ tool: 'wrk (closed loop, max)', offered: NaN, delivered: w.rps, drops: '—', lag: '—', latency: `${w.p50} / ${w.p99}`, cpu: w.cpuUs / w.requests });
      printRow(rows[rows.length - 1], true);
    }
    for (const rate of RATES) {
      if (TOOLS.has('rig')) {
        const out = path.join(dir, `rig-${rate}.csv.gz`);
        const res = await runLoad({ url, apiKey: 'bench', rate: rate * BATCH, batch: BATCH, seconds: SECONDS, customers: ['cus_0001', 'cus_0002'], out }, undefined, { preflight: false });
        const { analysis } = await analyzeFile(out, { durationS: SECONDS });
        const i = analysis.ingest;
        rows.push({
          tool: 'rig (open loop)',
          offered: i.offered_rate_rps,
          delivered: i.delivered_rate_rps,
          drops: String(i.dropped),
          lag: `${f2(ms(i.schedule_lag_p50_us))} / ${f2(ms(i.schedule_lag_p99_us))}`,
          latency: `${f2(ms(i.p50_us))} / ${f2(ms(i.p99_us))}`,
          cpu: res.summary.cpu_us_per_request,
        });
        printRow(rows[rows.length - 1], rows.length === 1);
        fs.rmSync(out, { force: true });
      }
      if (TOOLS.has('autocannon')) {
        const a = autocannon(url, rate, SECONDS);
        rows.push({
          tool: 'autocannon (overallRate)',
          offered: rate,
          delivered: a.rps,
          drops: '—',
          lag: '—',
          latency: `${f2(a.p50_ms)} / ${f2(a.p99_ms)}`,
          cpu: a.cpu_us_per_request,
          note: a.errors || a.non2xx ? `${a.errors} errors, ${a.non2xx} non-2xx` : undefined,
        });
        printRow(rows[rows.length - 1], rows.length === 1);
      }
    }
    console.log(`\nload average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    sink.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (us: number | null) => (us === null ? null : us / 1000);

function printRow(r: Row, header: boolean): void {
  if (header) {
    console.log('| tool | offered req/s | delivered req/s | delivered % | drops | schedule lag p50 / p99 ms | latency p50 / p99 ms | CPU µs/request |');
    console.log('|---|---|---|---|---|---|---|---|');
  }
  const pct = Number.isFinite(r.offered) ? `${((r.delivered / r.offered) * 100).toFixed(2)} %` : '—';
  console.log(
    `| ${r.tool} | ${Number.isFinite(r.offered) ? Math.round(r.offered).toLocaleString('en-US') : 'max'} | ${Math.round(r.delivered).toLocaleString('en-US')} | ${pct} | ${r.drops} | ${r.lag} | ${r.latency} | ${r.cpu === null ? '—' : f1(r.cpu)}${r.note ? ` (${r.note})` : ''} |`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
