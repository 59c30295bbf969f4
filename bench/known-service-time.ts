// The rig and k6 against the calibration server, for the same known service time (bench:loadgen's
// last table). The calibration server holds each ingest request to its service time exactly and
// records, per request, its arrival and the moment its answer was written on its own clock
// (lib/loadgen/calibration-server.ts). What each tool reports beyond that truth is what the tool
// itself adds to a latency: its sending, its event loop or scheduler, its reading of the answer.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { analyzeFile } from '../lib/loadgen/analyze-file';
import { CalibrationServerProcess } from '../lib/loadgen/calibration-server-process';
import type { TruthRow } from '../lib/loadgen/calibration-server';
import { defaultMaxInFlight } from '../lib/loadgen/options';
import { percentiles } from '../lib/protocol/percentile';
import { runLoad } from '../lib/loadgen/run-load';
import { k6 } from './k6-runner';

export interface KnownServiceRow {
  tool: string;
  requests: number;
  /** The server's own time per request (written - arrival), p50 / p99, ms. */
  server: [number, number];
  /** The tool's latency, p50 / p99, ms. */
  client: [number, number];
}

const API_KEY = 'bench';
const CUSTOMER = 'cus_0001';

function serverTimes(rows: readonly TruthRow[]): [number, number] {
  const [p50, p99] = percentiles(rows.filter((r) => r.status < 300).map((r) => r.written - r.arrival), [50, 99]);
  return [p50, p99];
}

export async function knownServiceTime(dir: string, o: { rate: number; seconds: number; serviceMs: number }): Promise<KnownServiceRow[]> {
  const server = await CalibrationServerProcess.start({ apiKey: API_KEY, customers: [CUSTOMER] });
  const rows: KnownServiceRow[] = [];
  const tag = (what: string) => `bench-${what}-${crypto.randomBytes(3).toString('hex')}`;
  try {
    // Warm the server's JIT first, unmeasured, as calibration does.
    await server.configure({ serviceMs: 1 });
    const warm = tag('warm');
    await runLoad({ url: server.url, apiKey: API_KEY, rate: 1000, batch: 1, seconds: 2, runTag: warm, customers: [CUSTOMER], out: path.join(dir, 'warm.csv.gz') }, undefined, { preflight: false });
    await server.truth(warm);
    await server.configure({ serviceMs: o.serviceMs });

    const rigTag = tag('rig');
    const out = path.join(dir, `${rigTag}.csv.gz`);
    await runLoad({ url: server.url, apiKey: API_KEY, rate: o.rate, batch: 1, seconds: o.seconds, runTag: rigTag, customers: [CUSTOMER], out }, undefined, { preflight: false });
    const { analysis } = await analyzeFile(out, { durationS: o.seconds });
    const i = analysis.ingest;
    rows.push({ tool: 'rig (open loop)', requests: i.ok + i.failed, server: serverTimes(await server.truth(rigTag)), client: [(i.p50_us ?? NaN) / 1000, (i.p99_us ?? NaN) / 1000] });
    fs.rmSync(out, { force: true });

    const k6Tag = tag('k6');
    const k = k6({ url: server.url, apiKey: API_KEY, rate: o.rate, seconds: o.seconds, maxVUs: defaultMaxInFlight(o.rate), runTag: k6Tag, customer: CUSTOMER, dir });
    rows.push({ tool: 'k6 (constant-arrival-rate)', requests: k.requests, server: serverTimes(await server.truth(k6Tag)), client: [k.p50_ms, k.p99_ms] });
  } finally {
    await server.stop();
  }
  return rows;
}

export function printKnownServiceTime(rows: readonly KnownServiceRow[], serviceMs: number): void {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '—');
  console.log(`| tool | requests | server's time p50 / p99 ms (truth; set to ${serviceMs} ms) | tool's latency p50 / p99 ms | added by the tool p50 / p99 ms |`);
  console.log('|---|---:|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.tool} | ${r.requests.toLocaleString('en-US')} | ${f(r.server[0])} / ${f(r.server[1])} | ${f(r.client[0])} / ${f(r.client[1])} | ${f(r.client[0] - r.server[0])} / ${f(r.client[1] - r.server[1])} |`);
  }
}
