// The existing target (issue 14 part 2): a running service and its database that the rig did not make
// and never unmakes. Provision is connect (connect.ts); teardown and the clean check do nothing
// (leave.ts); the database URLs come from the worker's environment or a file at the moment of use
// (urls.ts); the fixtures' API key, which bring-up mints in the deployment's database, is kept in a
// 0600 file (api-keys.ts). No Postgres log (the rig cannot read the server's), no disk sampler, no
// variants (the rig changes no setting of a deployment that is not its own).
import os from 'node:os';
import { dataQueue } from '../../temporal/queues';
import { userPgbenchRunner } from '../pgbench-user-runner';
import type { Target } from '../target';
import { existingApiKeys } from './api-keys';
import { connectExisting } from './connect';
import { connectionExisting } from './connection';
import { cleanCheckExisting, teardownExisting } from './leave';
import { existingPaths } from './paths';
import { connectedRecord } from './record';
import { existingDbUrls } from './urls';

export const existingTarget: Target = {
  name: 'existing',
  provision: connectExisting,
  teardown: teardownExisting,
  cleanCheck: cleanCheckExisting,
  connection: connectionExisting,
  describe: (campaignId) => {
    const rec = connectedRecord(campaignId);
    return {
      serviceUrl: rec.serviceUrl,
      database: `${rec.database.host}:${rec.database.port}/${rec.database.name}`,
      rigDir: '',
      parameters: { server_version: rec.serverVersion, ...rec.parameters },
    };
  },
  dbUrls: async (campaignId) => existingDbUrls(campaignId),
  apiKeys: existingApiKeys,
  // The server's log is the deployment's: every repeat's postgres.log is empty, and the page's tails
  // are attributed from the DB sampler alone.
  openPostgresLog: async () => ({ read: async () => '' }),
  hardware: (campaignId, declared) => {
    const rec = connectedRecord(campaignId);
    return {
      line: `${declared.description} (existing deployment: database ${rec.database.host}:${rec.database.port}/${rec.database.name}, PostgreSQL ${rec.serverVersion}; load from ${os.hostname()})`,
      costPerHour: declared.costPerHour,
    };
  },
  // The load comes from the host that connected: its data-plane worker holds the URLs' sources.
  dataQueue: (_campaignId, host) => dataQueue(host),
  pgbenchRunner: () => userPgbenchRunner(),
  availabilityZones: async () => undefined,
  workDir: (campaignId) => existingPaths(campaignId).dir,
  leftoverKinds: [],
  extendExpiry: async () => {},
};
