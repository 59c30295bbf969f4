// finishCampaign: result.json and one record per step are written, the folder is sealed with its
// manifest, and the page is rendered from the files alone (lib/evidence/report).
// Safe to run twice: step records already written are kept, and the page is written once (the same
// evidence gives the same bytes; a page of different evidence is refused, not replaced).
import { RESULT_FILE, stepFile } from '../lib/evidence/layout';
import { publishReport } from '../lib/evidence/report';
import { EvidenceStore } from '../lib/evidence/store';
import type { FinishInput, FinishOutput } from './contract';

export async function finishCampaign(input: FinishInput): Promise<FinishOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  const result = { ...input.result, resultsDir: store.dir };
  input.result.steps.forEach((s, i) => {
    if (!store.exists(stepFile(i + 1, s.step))) store.writeJson(stepFile(i + 1, s.step), { ...s, index: i + 1 });
  });
  store.writeJson(RESULT_FILE, result);
  store.appendLog('info', `campaign ${input.campaignId} finished: ${result.status}`);
  const published = await publishReport(store.dir, { seal: true });
  return { resultsDir: store.dir, reportPath: published.htmlPath };
}
