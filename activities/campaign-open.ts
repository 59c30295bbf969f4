// openCampaign: the evidence folder is made and the spec written before anything else happens;
// also reports which of the rig's search attributes the cluster lacks (the workflow then does not
// upsert them, and the log says how to add them).
// On target "existing" it also looks (without reading them out) at the sources of the database URLs:
// a variable missing from this worker's environment, or a file missing here, refuses the campaign
// before anything runs.
// Safe to run twice: it writes the same spec.json again and only reads the cluster's search attributes.
import { EvidenceStore } from '../lib/evidence/store';
import { SPEC_FILE } from '../lib/evidence/layout';
import { missingSearchAttributes, RIG_SEARCH_ATTRIBUTE_NAMES, searchAttributeCommands } from '../lib/temporal/search-attributes';
import { secretSourcesProblems } from '../lib/targets/secret-source';
import type { OpenCampaignInput, OpenCampaignOutput } from './contract';
import { namespace, workerClient } from './context';
import { refusal } from './refusal';

export async function openCampaign(input: OpenCampaignInput): Promise<OpenCampaignOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  store.writeJson(SPEC_FILE, input.spec);
  const existing = input.spec.existing;
  if (existing) {
    const problems = secretSourcesProblems([
      ['existing.databaseUrlFrom', existing.databaseUrlFrom],
      ['existing.appDatabaseUrlFrom', existing.appDatabaseUrlFrom],
    ]);
    if (problems.length) {
      store.appendLog('warning', `refused before anything ran: ${problems.join('; ')}`);
      throw refusal('SecretRefusal', `target "existing": ${problems.join('; ')}`);
    }
  }
  const client = workerClient();
  const ns = namespace() ?? 'default';
  let missing: string[] = [];
  try {
    if (client) missing = await missingSearchAttributes(client.connection.operatorService, ns);
  } catch (err) {
    missing = [...RIG_SEARCH_ATTRIBUTE_NAMES];
    store.logWarning(`could not list search attributes (${(err as Error).message}); campaign runs without them`);
  }
  if (missing.length) {
    store.logWarning(`the cluster lacks search attributes ${missing.join(', ')}; add them with: ${searchAttributeCommands(missing, ns).join(' ; ')}`);
  }
  store.appendLog('info', `campaign ${input.campaignId} opened (${input.spec.name}, target ${input.spec.target})`);
  return { resultsDir: store.dir, missingSearchAttributes: missing };
}
