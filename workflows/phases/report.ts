// The report: result.json, step records, manifest, report.md/html (finishCampaign on the claimed host,
// where the evidence is), the comparison with a baseline (RigRegressed), and the campaign's last
// searchable status. Leftovers after teardown outrank whatever was measured.
// Patch id: 'evidence-of-one-run' (a run whose folder openCampaign refused as another run's writes no
// report there; issue 47 item 3).
import { patched } from '@temporalio/workflow';
import type { CampaignResult, CampaignStatus } from '../../lib/protocol/campaign-result';
import { failureReason } from '../failures';
import { RigRegressed, RigStatus, RigStep } from '../search-attributes';
import { outcomes, type Campaign } from './context';
import type { RigEnd } from './teardown';

/** Set by a run whose evidence folder was refused: finishCampaign is not called (a new command order). */
export const EVIDENCE_OF_ONE_RUN_PATCH = 'evidence-of-one-run';

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
  // The folder is another run's: its result.json, steps and page stay that run's (lib/evidence/folder-owner.ts);
  // this run's result (the workflow's) says why it wrote nothing.
  if (cx.evidenceRefused !== undefined && patched(EVIDENCE_OF_ONE_RUN_PATCH)) cx.skip('report', `not written: the evidence folder is another run's (${cx.evidenceRefused})`);
  else await finish(cx, res);
  progress.step = 'done';
  progress.status = res.status;
  cx.setSearchAttributes([
    { key: RigStep, value: 'done' },
    // Searchable: `rig campaign list` and RigStatus = 'teardown-failed' find a rig left behind.
    { key: RigStatus, value: rigState === 'teardown-failed' ? 'teardown-failed' : res.status },
  ]);
  return res;
}

/** finishCampaign on the claimed host: result.json, the step records, the page; a failure marks the result. */
async function finish(cx: Campaign, res: CampaignResult): Promise<void> {
  const { spec, campaignId } = cx;
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
}
