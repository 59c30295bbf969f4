// The denominator (the protocol's db-ceiling.sh): pgbench on the same database and row shape, so
// "the service does N" is always beside "the database alone does M".
import { DENOMINATOR_LEGS } from '../../lib/protocol/plan';
import type { Campaign } from './context';

export async function denominator(cx: Campaign): Promise<void> {
  const { spec, campaignId, progress } = cx;
  if (!spec.denominator || cx.aborting) return;
  const d = spec.denominator;
  progress.configuration = 'denominator';
  progress.secondsLeft = d.seconds * DENOMINATOR_LEGS;
  cx.denominator = await cx.step(
    'denominator',
    () =>
      cx.data({ startToCloseTimeout: `${d.seconds * DENOMINATOR_LEGS + 600} seconds`, heartbeatTimeout: '1 minute' }).runDenominator({
        campaignId,
        rig: cx.theRig,
        batch: d.batch,
        clients: d.clients,
        seconds: d.seconds,
        hardcountEventsPerSecond: cx.ceiling?.deliveredRate,
      }),
    (r) => r.legs.map((l) => `${l.leg} ${Math.round(l.rowsPerSecond)} ${l.leg === 'owner-commit' ? 'commits' : 'rows'}/s${l.rowsVerified ? '' : ' (rows NOT verified)'}`).join('; '),
  );
}
