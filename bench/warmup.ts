// npm run bench:warmup [-- --runs N]: does the warm-up take the cold start out of repeat 1?
//
// Runs the rehearsal profile's sustained series (2 configurations x 3 repeats x 30 s, 5-s cool-downs,
// 200k seeded rows; no calibration, ceiling or denominator, which do not touch repeat 1) on the local
// rig, N times without a warm-up (warmupSeconds 0: the protocol as written) and N times with the
// profile's 10-s warm-up, interleaved (off, on, off, on, ...) so that whatever else the machine does
// falls on both sides alike. For each campaign and configuration it prints repeat 1 beside repeats 2-3
// (p99, freeze-seconds, verdict). Prints a table; never a pass/fail.
import os from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startCampaignServer } from '../test/harness/campaign-server';
import { PROFILES, type CampaignSpecInput } from '../lib/protocol/spec';
import type { CampaignResult, RepeatSummary } from '../lib/protocol/campaign-result';
import { createRigWorkers } from '../worker/run-worker';

Runtime.install({ logger: new DefaultLogger('ERROR') });

function spec(warmupSeconds: number): CampaignSpecInput {
  const r = PROFILES.rehearsal;
  return { ...r, name: `warmup-${warmupSeconds}`, calibrate: false, ceiling: undefined, denominator: undefined, sustained: { ...r.sustained!, warmupSeconds } };
}

function runsArg(): number {
  const i = process.argv.indexOf('--runs');
  const n = i >= 0 ? Number(process.argv[i + 1]) : 3;
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new Error('--runs must be a whole number from 1 to 20');
  return n;
}

const p99 = (r: RepeatSummary | undefined) => (r ? `${r.p99Ms?.toFixed(1) ?? '—'} ms${r.passed ? '' : ' FAIL'}` : '—');
const fz = (rs: RepeatSummary[]) => rs.map((r) => String(r.freezeSeconds)).join('/') || '—';

async function main(): Promise<void> {
  const runs = runsArg();
  const server = await startCampaignServer('rig-bench-warmup-');
  const { connection, workers } = await createRigWorkers({ env: { address: server.address, namespace: 'default' } });
  const running = Promise.all(workers.map((w) => w.run()));
  const rows: string[][] = [];
  /** Why each failed repeat failed (its gate's reasons), printed under the table. */
  const failures: string[] = [];
  try {
    for (let i = 0; i < runs * 2; i++) {
      const warm = i % 2 === 1 ? (PROFILES.rehearsal.sustained!.warmupSeconds ?? 10) : 0;
      const id = `bench-warmup-${Date.now()}-${i}`;
      console.error(`campaign ${i + 1}/${runs * 2}: warmupSeconds ${warm} (${id})...`);
      const started = Date.now();
      const result = (await server.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec(warm)] })) as CampaignResult;
      const warmups = result.steps.filter((s) => s.step === 'warm-up').map((s) => s.summary);
      for (const c of result.configurations) {
        const rs = result.repeats.filter((r) => r.configuration === c.name).sort((a, b) => a.index - b.index);
        const wu = warmups.find((w) => w.startsWith(`${c.name}:`));
        rows.push([
          String(Math.floor(i / 2) + 1),
          warm ? `${warm} s` : 'off',
          c.name,
          p99(rs[0]),
          String(rs[0]?.freezeSeconds ?? '—'),
          rs.slice(1).map(p99).join(', ') || '—',
          fz(rs.slice(1)),
          wu ? (/p99 ([\d.]+ ms|—)/.exec(wu)?.[1] ?? '—') : '—',
          `${c.passed}/${c.total}`,
        ]);
        for (const r of rs.filter((x) => !x.passed)) failures.push(`run ${Math.floor(i / 2) + 1}, warm-up ${warm ? `${warm} s` : 'off'}, ${c.name} r${r.index}: ${r.reasons.join('; ')}`);
      }
      console.error(`  ${result.status} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${result.configurations.map((c) => `${c.name} ${c.passed}/${c.total}`).join(', ')}`);
    }
  } finally {
    workers.forEach((w) => w.shutdown());
    await running;
    await connection.close();
    await server.close();
  }
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`bench:warmup on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 16)}Z, load average now ${load}`);
  const header = ['run', 'warm-up', 'configuration', 'repeat 1 p99', 'r1 freeze-s', 'repeats 2-3 p99', 'r2-3 freeze-s', 'warm-up p99', 'passed'];
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  console.log(header.map((h, i) => h.padEnd(w[i])).join(' | '));
  console.log(w.map((n) => '-'.repeat(n)).join('-|-'));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i])).join(' | '));
  if (failures.length) console.log(['', 'why each failed repeat failed:', ...failures.map((f) => `  ${f}`)].join('\n'));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
