// seed: history rows by COPY into the fixtures' partition, then settle until autovacuum and analyze
// are idle (the spec: a bulk seed leaves autovacuum busy for minutes, and the first repeat after it
// failed its gate on a 5-second stall).
import { EvidenceStore } from '../lib/evidence/store';
import { rigDbUrls } from '../lib/targets/local';
import { seed } from '../lib/targets/seed';
import { rebuildRollup } from '../reference/rollup';
import type { SeedInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { refusing } from './refusal';

export async function seedHistory(input: SeedInput): Promise<StepSummary> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  if (input.rows === 0) return { summary: 'no history rows asked for' };
  const { ownerUrl } = rigDbUrls(input.campaignId);
  let lastLog = 0;
  const res = await refusing(() =>
    seed({
      ownerUrl,
      rows: input.rows,
      settle: { timeoutMs: input.settleTimeoutSeconds * 1000 },
      onProgress: (p) => {
        heartbeat({ phase: p.phase, rows: p.rows, total: p.total });
        if (p.elapsedMs - lastLog >= 10_000) {
          lastLog = p.elapsedMs;
          store.appendLog('info', `seed ${p.phase}: ${p.rows}/${p.total} rows, ${Math.round(p.rowsPerSec)} rows/s`);
        }
      },
    }),
  );
  if (input.rebuildRollup) {
    const n = await rebuildRollup(ownerUrl);
    store.appendLog('info', `seed: daily rollup rebuilt (${n} rows) for HC_AGGREGATE=rollup`);
  }
  const settle = res.settle ? `; autovacuum settled after ${res.settle.seconds.toFixed(1)} s` : '';
  const summary = `${res.verifiedRows} rows (tag ${res.tag}) in livemode=${res.livemode} at ${Math.round(res.rowsPerSec)} rows/s${settle}`;
  store.appendLog('info', `seed: ${summary}`);
  return { summary };
}
