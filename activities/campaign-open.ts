// openCampaign: the evidence folder is made and the spec written before anything else happens;
// also reports which of the rig's search attributes the cluster lacks (the workflow then does not
// upsert them, and the log says how to add them).
// On target "existing" it also looks (without reading them out) at the sources of the database URLs:
// a variable missing from this worker's environment, or a file missing here, refuses the campaign
// before anything runs.
// The folder belongs to the run that made it (lib/evidence/folder-owner.ts): run.json is written first,
// and a later run under the same workflow id (or an id that maps to the same folder) is refused before
// anything is written, so it can never take the earlier run's evidence as its own.
// Safe to run twice: a retry in the same run finds its own run.json, writes the same spec.json again
// and only reads the namespace's search attributes.
import { claimFolder, EvidenceOwnerError } from '../lib/evidence/folder-owner';
import { EvidenceStore } from '../lib/evidence/store';
import { SPEC_FILE } from '../lib/evidence/layout';
import { checkSearchAttributes, RIG_SEARCH_ATTRIBUTE_NAMES, searchAttributeCommands } from '../lib/temporal/search-attributes';
import { secretSourcesProblems } from '../lib/targets/secret-source';
import type { OpenCampaignInput, OpenCampaignOutput } from './contract';
import { activityRun, namespace, workerClient } from './context';
import { refusal } from './refusal';

export async function openCampaign(input: OpenCampaignInput): Promise<OpenCampaignOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  const run = activityRun();
  if (!run) throw new Error('openCampaign runs inside a campaign\'s workflow: the folder belongs to its run (workflow id and run id)');
  try {
    claimFolder(store, { workflow_id: run.workflowId, run_id: run.runId });
  } catch (err) {
    if (err instanceof EvidenceOwnerError) throw refusal('EvidenceOwnerRefusal', err.message, { folder: err.folder, owner: err.owner });
    throw err;
  }
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
    if (client) {
      const check = await checkSearchAttributes(client.connection, ns);
      missing = check.missing;
      if (check.via === 'query') store.appendLog('info', `search attributes found by visibility queries (the OperatorService refused: ${check.operatorRefusal})`);
    }
  } catch (err) {
    // Cannot tell (both ways refused or failed): an upsert of an attribute the namespace lacks would
    // fail every workflow task, so the campaign runs without them, and says why.
    missing = [...RIG_SEARCH_ATTRIBUTE_NAMES];
    store.logWarning(`could not find out the namespace's search attributes (${(err as Error).message}); campaign runs without them`);
  }
  if (missing.length) {
    store.logWarning(
      `the namespace lacks search attributes ${missing.join(', ')}; add them with: ${searchAttributeCommands(missing, ns).join(' ; ')} (on Temporal Cloud: tcld namespace search-attributes add, or the Cloud UI)`,
    );
  }
  store.appendLog('info', `campaign ${input.campaignId} opened (${input.spec.name}, target ${input.spec.target})`);
  return { resultsDir: store.dir, missingSearchAttributes: missing };
}
