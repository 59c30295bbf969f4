// The history the measured load writes beside (the protocol's seed-history.sh): rows copied into the
// fixtures' partition, then settled (autovacuum done, a CHECKPOINT) so the first repeat does not pay
// for the load. A variant with `fresh` re-seeds an emptied table through reseedFresh.
import { usesRollup } from '../../lib/protocol/service-spec';
import type { CampaignSpec } from '../../lib/protocol/spec';
import type { Campaign } from './context';

/** The seed's activities: long enough for the rows at 5,000 a second, the settle and an hour's margin; heartbeating. */
function seedActs(cx: Campaign) {
  const seed = cx.spec.seed;
  return cx.data({ startToCloseTimeout: `${seed.settleTimeoutSeconds + 3600 + Math.ceil(seed.historyRows / 5000)} seconds`, heartbeatTimeout: '30 seconds' });
}

export async function seed(cx: Campaign): Promise<void> {
  const { spec, campaignId } = cx;
  const rig = cx.theRig;
  await cx.step(
    'seed',
    () =>
      seedActs(cx).seedHistory({
        campaignId,
        rig,
        rows: spec.seed.historyRows,
        settleTimeoutSeconds: spec.seed.settleTimeoutSeconds,
        rebuildRollup: usesRollup(spec.service),
        // Into an existing deployment: refuse when the fixtures' partition holds rows the rig did not write.
        ...(spec.target === 'existing' ? { foreignRows: spec.seed.allowForeignRows ? ('allow' as const) : ('refuse' as const) } : {}),
      }),
    (r) => r.summary,
  );
}

/** Blocks with fresh: a variant after the first writes its own history into an emptied table (a step within the series). */
export async function reseedFresh(cx: Campaign, variant: string, service: CampaignSpec['service']): Promise<void> {
  const { spec, campaignId } = cx;
  const rig = cx.theRig;
  await cx.step('seed', () => seedActs(cx).seedHistory({ campaignId, rig, rows: spec.seed.historyRows, settleTimeoutSeconds: spec.seed.settleTimeoutSeconds, rebuildRollup: usesRollup(service), fresh: variant }), (r) => r.summary, true);
}
