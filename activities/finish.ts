// finishCampaign: result.json and one record per step are written, the folder is sealed with its
// manifest, and the page is rendered from the files alone (lib/evidence/report). On a rig with nodes
// (AWS) that is still there, the nodes' evidence is gathered first.
// Safe to run twice: step records already written are kept, and the page is written once (the same
// evidence gives the same bytes; a page of different evidence is refused, not replaced).
import { RESULT_FILE, stepFile } from '../lib/evidence/layout';
import { publishReport } from '../lib/evidence/report';
import { EvidenceStore } from '../lib/evidence/store';
import type { FinishInput, FinishOutput } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import type { ActivityDeps } from './deps';

export function finishActivities(deps: ActivityDeps) {
  return { finishCampaign: (input: FinishInput) => finishCampaignWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { finishCampaign } = finishActivities(defaultDeps);

async function finishCampaignWith(deps: ActivityDeps, input: FinishInput): Promise<FinishOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  // A rig with nodes whose evidence is still in its bucket (end: keep, or a teardown that kept the
  // bucket): gathered before the page, so the page sees every repeat. Teardown gathered already
  // otherwise, and a second gathering finds every file in place.
  const nodes = deps.targetFor(input.result.target).nodes;
  if (nodes && input.result.rig !== 'destroyed' && input.result.rig !== 'not-provisioned') {
    try {
      store.appendLog('info', `before the report: ${await nodes.gatherEvidence(input.campaignId, (line) => heartbeat(line))}`);
    } catch (err) {
      store.appendLog('warning', `before the report: the nodes' evidence could not be gathered (${(err as Error).message}); the page shows what this host has`);
    }
  }
  const result = { ...input.result, resultsDir: store.dir };
  input.result.steps.forEach((s, i) => {
    if (!store.exists(stepFile(i + 1, s.step))) store.writeJson(stepFile(i + 1, s.step), { ...s, index: i + 1 });
  });
  store.writeJson(RESULT_FILE, result);
  store.appendLog('info', `campaign ${input.campaignId} finished: ${result.status}`);
  const published = await publishReport(store.dir, { seal: true });
  return { resultsDir: store.dir, reportPath: published.htmlPath };
}
