// denominator: pgbench on the same database and row shape, four legs: the database's commit rate
// (one-row transactions, batch 1), then at the campaign's batch one-row INSERTs as the owner, the same
// through RLS as the app role, and one multi-row INSERT per transaction. Every throughput figure sits
// beside these: "Hardcount does N" next to "the database alone does M" and "commits N/s". Each leg
// starts settled (VACUUM + CHECKPOINT, lib/targets/denominator.ts), and legs.json keeps the order they
// ran in and what settling each took. A ratio is printed only between figures of one unit: the
// ceiling's events/s over the multi-row leg's rows/s, never over the commit leg's commits/s.
// Safe to run twice: every attempt has its own tag prefix and counts only its own rows, so rows of an
// interrupted attempt are counted in no leg; it runs after every repeat, so they are in no repeat either.
import { EvidenceStore } from '../lib/evidence/store';
import { DENOMINATOR_FILE } from '../lib/evidence/layout';
import type { DenominatorFile } from '../lib/evidence/records';
import { denominator } from '../lib/targets/denominator';
import type { DenominatorInput, DenominatorOutput } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';
import { refusing } from './refusal';

const DESCRIPTION: Record<string, string> = {
  'owner-commit': "one-row transactions (batch 1), as the owner: the database's own commit rate",
  'owner-1row': 'one-row INSERTs per transaction, as the owner (the spec denominator)',
  'rls-1row': 'the same through row-level security, as the app role with the service session settings',
  'owner-multirow': 'one multi-row INSERT per transaction (the floor for #823)',
};

export function denominatorActivities(deps: ActivityDeps) {
  return { runDenominator: (input: DenominatorInput) => runDenominatorWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { runDenominator } = denominatorActivities(defaultDeps);

async function runDenominatorWith(deps: ActivityDeps, input: DenominatorInput): Promise<DenominatorOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  const target = rigTarget(deps, input.rig);
  const urls = await target.dbUrls(input.campaignId);
  const runner = await target.pgbenchRunner(input.campaignId);
  try {
    const res = await refusing(() =>
      denominator({
        ownerUrl: urls.ownerUrl,
        appUrl: urls.appUrl,
        runner,
        clients: input.clients,
        seconds: input.seconds,
        batch: input.batch,
        checkpointUrl: urls.superuserUrl,
        onProgress: (line) => heartbeat(line),
      }),
    );
    const file: DenominatorFile = {
      legs: res.legs.map((l) => ({
        leg: l.leg,
        order: l.order,
        settled_before: l.settledBefore,
        description: DESCRIPTION[l.leg] ?? l.leg,
        clients: l.clients,
        batch: l.batch,
        seconds: l.seconds,
        transactions: l.transactions,
        rows: l.countedRows,
        tps: l.tps,
        rows_per_s: l.rowsPerSec,
        rows_verified: l.countedRows === l.expectedRows && l.otherModeRows === 0,
        rows_expected: l.expectedRows,
        rows_found: l.countedRows,
        livemode: res.livemode,
        latency_avg_ms: l.latencyAvgMs,
      })),
    };
    store.writeJson(DENOMINATOR_FILE, file);
    for (const l of file.legs) {
      // events/s over rows/s of the multi-row leg only: the commit leg's figure is commits/s.
      const ratio = input.hardcountEventsPerSecond && l.leg === 'owner-multirow' && l.rows_per_s > 0 ? `; the ceiling's events/s are ${Math.round((100 * input.hardcountEventsPerSecond) / l.rows_per_s)} % of its rows/s` : '';
      const settled = l.settled_before?.checkpoint.error ? '; began WITHOUT a checkpoint' : '; began after VACUUM + CHECKPOINT';
      const figure = l.batch === 1 ? `${Math.round(l.tps)} one-row commits/s` : `${Math.round(l.rows_per_s)} rows/s`;
      store.appendLog('info', `denominator leg ${l.order} ${l.leg}: ${figure} (${l.clients} clients, batch ${l.batch})${l.rows_verified ? '' : ' ROWS NOT VERIFIED'}${settled}${ratio}`);
    }
    return {
      legs: file.legs.map((l) => ({ leg: l.leg, rowsPerSecond: l.rows_per_s, rowsVerified: l.rows_verified })),
      dir: 'denominator',
    };
  } finally {
    runner.cleanup();
  }
}
