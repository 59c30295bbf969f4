// What `rig rehearse` (and `npm start`) exits with. A rehearsal shows that the rig works end to end on
// this machine: calibrated, every repeat judged and published, the rig torn down clean. Its verdict on
// the reference service (HELD or NOT-HELD) is printed with every failed repeat's reason, and on a VM
// whose hypervisor steals CPU mid-repeat a NOT-HELD is a true reading of that host, not a broken rig
// (docs/instrument.md, "A disturbed host"). So the rehearsal exits 0 on either verdict, 1 when the rig
// did not do its job; --require-held makes HELD the only 0, as `rig campaign start --wait` always does
// (NOT-HELD is then 99, the codes of client/exit-codes.ts). NOT JUDGED, with no configuration failed,
// is not a verdict: the instrument failing on this host (a repeat invalid twice), or a drift the
// samples could not decide (its interval straddled the limit). The rehearsal still ran end to end, so
// exit 0 and say so on the last line; --require-held exits 4 on it, as `campaign start --wait` does.
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { campaignExitCode, EXIT } from './exit-codes';

export function rehearsalExitCode(result: Pick<CampaignResult, 'status'>, requireHeld = false): number {
  if (requireHeld) return campaignExitCode(result.status);
  if (result.status === 'held' || result.status === 'not-held' || result.status === 'not-judged') return EXIT.OK;
  // uncalibrated, dirty, failed, aborted, cancelled: the rehearsal did not show the rig working.
  return EXIT.FAILED;
}

/** The last line: what the exit code means, so a 0 beside NOT-HELD is never misread. */
export function rehearsalVerdictLine(result: Pick<CampaignResult, 'status'> & { configurations?: CampaignResult['configurations'] }, requireHeld = false): string {
  const code = rehearsalExitCode(result, requireHeld);
  if (result.status === 'held') return 'rehearsal: the rig ran end to end and every configuration HELD (exit 0)';
  if (result.status === 'not-held') {
    return requireHeld
      ? 'rehearsal: the rig ran end to end; NOT-HELD (reasons above; --require-held: exit 99)'
      : 'rehearsal: the rig ran end to end; the verdict is NOT-HELD (reasons above, with the host\'s CPU steal where it was high). Exit 0: the rig worked; rig rehearse --require-held and rig campaign start --wait exit 99 on NOT-HELD';
  }
  if (result.status === 'not-judged') {
    const why = new Set((result.configurations ?? []).map((c) => c.notJudged).filter(Boolean));
    const words = [
      ...(why.has('instrument') || why.size === 0 ? ["NOT JUDGED (instrument): a repeat was invalid twice (the generator late, or the host's CPU stolen; reasons above)"] : []),
      ...(why.has('drift') ? ['NOT JUDGED (drift): a repeat passed every other gate, but its drift interval straddled the limit (too few samples a third to decide)'] : []),
    ];
    return `rehearsal: the rig ran end to end, no configuration failed, but ${words.join('; and ')}. Exit ${code}: not a verdict on the service${requireHeld ? '' : '; rig rehearse --require-held and rig campaign start --wait exit 4 on it'}`;
  }
  return `rehearsal: the rig did not run end to end (${result.status.toUpperCase()}; exit ${code})`;
}
