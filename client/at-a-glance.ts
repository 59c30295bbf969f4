// The At-a-glance table in the terminal at the end of `rig rehearse`, rebuilt from the evidence folder
// (the same model as the published page), with the page's path.
import path from 'node:path';
import { buildReport, renderAtAGlanceText } from '../lib/evidence/report';
import type { CampaignResult } from '../lib/protocol/campaign-result';

export async function printAtAGlance(result: CampaignResult): Promise<void> {
  if (!result.resultsDir) return;
  try {
    console.log(renderAtAGlanceText(await buildReport(result.resultsDir)));
  } catch (err) {
    console.log(`(the At-a-glance table could not be built from ${result.resultsDir}: ${(err as Error).message})`);
  }
  if (result.reportPath) console.log(`\nThe page: ${path.resolve(result.reportPath)}`);
}
