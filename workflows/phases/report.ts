// The report: result.json, step records, manifest, report.md/html (finishCampaign on the claimed host,
// where the evidence is), the comparison with a baseline (RigRegressed), and the campaign's last
// searchable status. Leftovers after teardown outrank whatever was measured.
import type { CampaignResult, CampaignStatus } from '../../lib/protocol/campaign-result';
import { failureReason } from '../failures';
import { RigRegressed, RigStatus, RigStep } from '../search-attributes';
import { outcomes, type Campaign } from './context';
import type { RigEnd } from './teardown';

export async function report(cx: Campaign, status: CampaignStatus, { rigState, cleanAfter, dirtyAfter }: RigEnd): Promise<CampaignResult> {
  const { spec, campaignId, progress, failure } = cx;
  // Leftovers after teardown outrank whatever was measured (a failure or a cancellation keeps its own
  // status, and its error names them too).
  const dirty = dirtyAfter ? `the clean-check after teardown found leftovers: ${cleanAfter}` : undefined;
  const res: CampaignResult = {
    campaignId,
    name: spec.name,
    target: spec.target,
    status: rigState === 'teardown-failed' ? 'failed' : dirty && status !== 'failed' && status !== 'cancelled' ? 'dirty' : status,
    error:
      [failure !== undefined ? failureReason(failure) : rigState === 'teardown-failed' ? `teardown failed: ${cleanAfter}` : undefined, dirty].filter(Boolean).join('; ') ||
      undefined,
    steps: cx.steps,
    repeats: cx.repeats,
    interrupted: cx.interrupted,
    configurations: outcomes(spec, cx.repeats),
    ceiling: cx.ceiling,
    denominator: cx.denominator,
    rig: rigState,
    cleanAfter,
    resultsDir: '',
  };
  try {
    const fin = await cx.step('report', () => cx.machine({}).finishCampaign({ campaignId, result: res, ...(spec.baseline ? { baseline: spec.baseline } : {}) }), (r) =>
      `${r.reportPath ?? 'no report'}${r.baselineId ? `; against ${r.baselineId}: ${r.regressed ? 'REGRESSED' : 'no regression'}` : ''}`,
    );
    res.resultsDir = fin.resultsDir;
    res.reportPath = fin.reportPath;
    // Searchable: a weekly schedule's runs that regressed (`RigRegressed = 'yes'`), and `rig schedule list`.
    if (fin.regressed !== undefined) {
      cx.setSearchAttributes([{ key: RigRegressed, value: fin.regressed ? 'yes' : 'no' }]);
    }
  } catch (err) {
    // The evidence is on disk already (written before it is summarised); only the page is missing.
    res.status = 'failed';
    res.error = `${res.error ? res.error + '; ' : ''}report failed: ${failureReason(err)}`;
  }
  progress.step = 'done';
  progress.status = res.status;
  cx.setSearchAttributes([
    { key: RigStep, value: 'done' },
    // Searchable: `rig campaign list` and RigStatus = 'teardown-failed' find a rig left behind.
    { key: RigStatus, value: rigState === 'teardown-failed' ? 'teardown-failed' : res.status },
  ]);
  return res;
}
