// The AWS target, first slice (issue 11 part 2): provision, teardown and the clean check by tag,
// against AWS or the emulator (RIG_AWS_ENDPOINT). What needs the workers on the load node (the
// data-plane queue, pgbench beside the database, the Postgres log, database URLs with the password
// from Secrets Manager, the API key store) is not built yet and says so when called.
import type { Target } from '../target';
import { cleanCheckAws, AWS_LEFTOVER_KINDS } from './clean-check';
import { provisionAws } from './provision';
import { readAwsRecord } from './record';
import { extendExpiryAws } from './retag';
import { teardownAws } from './teardown';
import { DB_NAME } from './provision';

const NOT_BUILT = 'not built yet: issue 11, workers on the load node';
function notBuilt(what: string): never {
  throw new Error(`aws target: ${what} is ${NOT_BUILT}`);
}

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
    return {
      campaignId,
      target: 'aws',
      serviceUrl: `http://${rec.appAddress}:8080`,
      db: {
        host,
        port: Number(port),
        database: DB_NAME,
        superuser: 'rig_admin',
        ownerRole: 'hardcount_owner',
        appRole: 'hardcount_app',
        ownerUrl: `postgres://hardcount_owner@${rec.dbEndpoint}/${DB_NAME}`,
        appUrl: `postgres://hardcount_app@${rec.dbEndpoint}/${DB_NAME}`,
      },
      files: {},
    };
  },
  describe: (campaignId) => {
    const rec = record(campaignId);
    return { serviceUrl: `http://${rec.appAddress}:8080`, database: `${rec.dbEndpoint}/${DB_NAME}`, rigDir: '', parameters: rec.parameters };
  },
  dbUrls: () => notBuilt('dbUrls (the master password from Secrets Manager)'),
  apiKeys: {
    store: () => notBuilt('the API key store'),
    read: () => notBuilt('the API key store'),
  },
  openPostgresLog: () => notBuilt('openPostgresLog (DownloadDBLogFilePortion)'),
  hardware: (campaignId, declared) => {
    const rec = readAwsRecord(campaignId);
    if (!rec) return { line: declared.description, costPerHour: declared.costPerHour };
    return { line: `${declared.description}: ${rec.hardwareLine}`, costPerHour: rec.costPerHour ?? declared.costPerHour };
  },
  dataQueue: () => notBuilt('dataQueue (the data-plane worker on the load node)'),
  pgbenchRunner: () => notBuilt('pgbenchRunner (pgbench on the load node)'),
  // Must be read from AWS at bring-up, never from the record (which says what was asked, not where it landed).
  availabilityZones: () => notBuilt('availabilityZones (bring-up on the load node)'),
  workDir: () => notBuilt('workDir (a folder on the load node)'),
  leftoverKinds: AWS_LEFTOVER_KINDS,
  extendExpiry: async (campaignId, expiresAt) => {
    await extendExpiryAws(campaignId, expiresAt);
  },
};
