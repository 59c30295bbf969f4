// The AWS target (issue 11 part 2): provision, teardown and the clean check by tag, against AWS or the
// emulator (RIG_AWS_ENDPOINT); the data-plane answers (database URLs with the passwords from Secrets
// Manager, the API key, pgbench, the zones, the Postgres log) on the load node, from the campaign id
// and AWS's own answers (data-plane.ts); the database and the service made ready on their nodes
// after provisioning (nodes.ts). Under the emulator a test-only map (emulator-map.ts) stands a local
// cluster in for RDS.
import { awsAppQueue, awsDataQueue } from '../../temporal/queues';
import type { Target } from '../target';
import { cleanCheckAws, AWS_LEFTOVER_KINDS } from './clean-check';
import { awsApiKeys, awsAvailabilityZones, awsDbUrls, awsPgbenchRunner, awsWorkDir, DB_NAME, openAwsPostgresLog, rigRegion, withClients } from './data-plane';
import { gatherEvidence, shipEvidence, summarizeGather } from './evidence-sync';
import { emulatorMap } from './emulator-map';
import { openAwsPostgresLog as openRdsPostgresLog } from './evidence/postgres-log';
import { fetchLoadNodeEvidence, fixtureCustomersAws, startLoadNodesAws } from './load-nodes';
import { prepareAwsDatabase, startAwsService } from './nodes';
import { awaitAwsDatabase, provisionAws } from './provision';
import { readAwsRecord } from './record';
import { extendExpiryAws } from './retag';
import { teardownAws } from './teardown';
import { collectCloudEvidence } from './evidence/collect';
import { nodeConsoleTails } from './console';
import { rigNames } from './names';
import { awsConnection, SERVICE_PORT } from './connection';

function record(campaignId: string) {
  const rec = readAwsRecord(campaignId);
  if (!rec) throw new Error(`aws target: no provisioned rig recorded for ${campaignId} (state/aws-rigs/${campaignId}.json)`);
  return rec;
}

export const awsTarget: Target = {
  name: 'aws',
  provision: provisionAws,
  teardown: teardownAws,
  cleanCheck: () => cleanCheckAws(),
  connection: async (campaignId) => {
    const rec = record(campaignId);
    const [host, port] = rec.dbEndpoint.split(':');
    return awsConnection(campaignId, rec.appAddress, host, Number(port));
  },
  describe: (campaignId) => {
    const rec = record(campaignId);
    return { serviceUrl: `http://${rec.appAddress}:${SERVICE_PORT}`, database: `${rec.dbEndpoint}/${DB_NAME}`, rigDir: '', parameters: rec.parameters };
  },
  dbUrls: awsDbUrls,
  apiKeys: awsApiKeys,
  openPostgresLog: (campaignId) => openAwsPostgresLog(campaignId, (id) => openRdsPostgresLog(rigRegion(id), rigNames(id).dbInstance)),
  // After each repeat's load, on the load node: CloudWatch, Enhanced Monitoring and Performance Insights
  // of its window (evidence/collect.ts); a source that fails writes its error into its own file. The
  // emulator publishes no metrics: nothing is waited for there (its files say what it answered).
  cloudEvidence: async (campaignId, window, write, onProgress) => {
    const dbInstanceIdentifier = rigNames(campaignId).dbInstance;
    await collectCloudEvidence({ region: rigRegion(campaignId), dbInstanceIdentifier, ...window }, write, { onProgress, ...(emulatorMap() ? { maxWaitMs: 0 } : {}) });
  },
  hardware: (campaignId, declared) => {
    const rec = readAwsRecord(campaignId);
    if (!rec) return { line: declared.description, costPerHour: declared.costPerHour };
    // The page's hardware row carries the database's measuring set-up after the machines.
    if (rec.rdsSettings) rec.hardwareLine = `${rec.hardwareLine}; RDS set up for measuring: ${rec.rdsSettings}`;
    if (rec.costPerHour === undefined) return { line: `${declared.description}: ${rec.hardwareLine}`, costPerHour: declared.costPerHour };
    return {
      line: `${declared.description}: ${rec.hardwareLine}`,
      costPerHour: rec.costPerHour,
      ...(rec.priceSource ? { priceSource: rec.priceSource } : {}),
      priceCovers: `the RDS instance, its gp3 storage, the app node and ${(rec.loadNodes ?? 1) > 1 ? `the ${rec.loadNodes} load nodes` : 'the load node'}, their public IPv4 addresses and root volumes, and Enhanced Monitoring's log ingestion`,
      ...(rec.costLines?.length ? { costNotes: rec.costLines } : {}),
    };
  },
  // The load node's worker serves this queue (its user data names it): derived from the campaign alone.
  dataQueue: (campaignId) => awsDataQueue(campaignId),
  pgbenchRunner: () => awsPgbenchRunner(),
  // Read from AWS at bring-up, never from the record (which says what was asked, not where it landed).
  availabilityZones: awsAvailabilityZones,
  workDir: awsWorkDir,
  nodes: {
    appQueue: awsAppQueue,
    prepareDatabase: prepareAwsDatabase,
    startService: startAwsService,
    shipEvidence: async (campaignId, onProgress) => {
      await withClients(campaignId, (c) => shipEvidence(c, campaignId, { onProgress }));
    },
    gatherEvidence: (campaignId, onProgress) => withClients(campaignId, async (c) => summarizeGather(await gatherEvidence(c, campaignId, { onProgress }))),
    // Several load nodes (issue 37, load-nodes.ts): what the nodes beyond the data plane's need of it, and it of them.
    fixtureCustomers: fixtureCustomersAws,
    fetchLoadNodeEvidence,
  },
  // The load node and the ones provisioning launched beside it (load.nodes > 1), by their tags.
  startLoadNodes: startLoadNodesAws,
  leftoverKinds: AWS_LEFTOVER_KINDS,
  extendExpiry: async (campaignId, expiresAt) => {
    await extendExpiryAws(campaignId, expiresAt);
  },
  awaitDatabase: awaitAwsDatabase,
  nodeConsole: (campaignId) => withClients(campaignId, (c) => nodeConsoleTails(c, campaignId)),
};
