// `npm run bench:switches`: what each slowed build's switch really adds (issue 45), intended beside
// measured, on a throw-away PostgreSQL cluster of this machine's (lib/targets/local/switch-calibration.ts
// says how). Prints the table and writes every row as JSON to
// <results>/bench-switches/<time>/switches.json, the evidence a sensitivity study cites for the size of
// the effects it provoked.
//
//   npm run bench:switches                                   # the default settings below
//   npm run bench:switches -- HC_ADDED_CPU_US=150 HC_EXTRA_WAL_BYTES=120 --blocks 6 --per-block 100
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgCluster } from '../lib/targets/local/pg-cluster';
import { calibrateSwitches } from '../lib/targets/local/switch-calibration';
import { SLOWED_BUILD_SWITCHES, switchTable, type SlowedBuildSwitch } from '../lib/protocol/switch-calibration';
import { resultsDir } from '../lib/tools/paths';
import { migrate } from '../reference/migrate';
import { setupRoles } from '../reference/roles';

/** 5 and 10 % of the reference service's ~2-ms p50, each way of adding it, and the 1-ms delay beside them. */
const DEFAULTS: Array<{ switch: SlowedBuildSwitch; setting: number }> = [
  { switch: 'HC_ADDED_CPU_US', setting: 100 },
  { switch: 'HC_ADDED_CPU_US', setting: 200 },
  { switch: 'HC_ADDED_WAIT_US', setting: 100 },
  { switch: 'HC_ADDED_WAIT_US', setting: 200 },
  { switch: 'HC_ADDED_DELAY_MS', setting: 1 },
  { switch: 'HC_EXTRA_WAL_BYTES', setting: 200 },
];

const log = (m: string) => console.error(`[bench:switches] ${m}`);

function parseArgs(argv: string[]): { settings: typeof DEFAULTS; blocks?: number; perBlock?: number } {
  const settings: typeof DEFAULTS = [];
  let blocks: number | undefined;
  let perBlock: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (flag: string) => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} takes a whole number >= 1, not ${JSON.stringify(argv[i])}`);
      return v;
    };
    if (a === '--blocks') blocks = num(a);
    else if (a === '--per-block') perBlock = num(a);
    else {
      const m = /^([A-Z_]+)=(\d+)$/.exec(a);
      if (!m || !(m[1] in SLOWED_BUILD_SWITCHES)) throw new Error(`${a}: give SWITCH=N with SWITCH one of ${Object.keys(SLOWED_BUILD_SWITCHES).join(', ')}, or --blocks N, --per-block N`);
      settings.push({ switch: m[1] as SlowedBuildSwitch, setting: Number(m[2]) });
    }
  }
  return { settings: settings.length ? settings : DEFAULTS, blocks, perBlock };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const outDir = path.join(resultsDir(), 'bench-switches', new Date().toISOString().replace(/[:.]/g, '-'));
  fs.mkdirSync(outDir, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-bench-switches-'));
  fs.chmodSync(dir, 0o755);
  log(`a throw-away cluster in ${dir}`);
  // Without autovacuum, whose WAL would land in whichever WAL block it ran beside (a few thousand rows
  // never need a vacuum to stay fast), and without a timed checkpoint in the few minutes it runs, whose
  // full-page images would (lib/targets/local/switch-calibration.ts, calibrateWal).
  const cluster = await PgCluster.create({ dir, parameters: { autovacuum: 'off', checkpoint_timeout: '1h', max_wal_size: '4GB' } });
  try {
    const { ownerUrl, appUrl } = await setupRoles(cluster.url(), { ownerPassword: 'bench-owner', appPassword: 'bench-app' });
    await migrate(ownerUrl);
    const loadBefore = os.loadavg()[0];
    const rows = await calibrateSwitches({ appUrl, ownerUrl, monitorUrl: cluster.url('hardcount') }, args.settings, { blocks: args.blocks, perBlock: args.perBlock, log });
    const file = path.join(outDir, 'switches.json');
    fs.writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), host: os.hostname(), cpus: os.cpus().length, loadAverage1m: [loadBefore, os.loadavg()[0]], postgres: cluster.binDir, rows }, null, 2) + '\n');
    console.log(switchTable(rows));
    log(`written ${file}`);
  } finally {
    await cluster.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`[bench:switches] ${(err as Error).message}`);
  process.exit(1);
});
