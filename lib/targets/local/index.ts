// The local target: a rig on this machine (a PostgreSQL cluster the rig makes + the reference service).
// Everything the steps ask of a target (lib/targets/target.ts) is answered from the rig's folder:
// rig.json, the 0600 secrets file, the cluster's own log and binaries.
import path from 'node:path';
import { dataQueue } from '../../temporal/queues';
import type { Target } from '../target';
import { cleanCheckLocal, LOCAL_LEFTOVER_KINDS } from './clean-check';
import { connectionLocal, rigDbUrls } from './connection';
import { describeLocal, hardwareLocal } from './describe';
import { localPgbenchRunner } from './pgbench-runner';
import { openLocalPostgresLog } from './postgres-log';
import { provisionLocal } from './provision';
import { rigPaths } from './rig-paths';
import { applySettingsLocal } from './settings';
import { startLoadNodesLocal } from './load-workers';
import { readRigRecord } from './rig-record';
import { readSecrets, storeApiKey } from './secrets';
import { teardownLocal } from './teardown';

export const localTarget: Target = {
  name: 'local',
  provision: provisionLocal,
  teardown: teardownLocal,
  cleanCheck: cleanCheckLocal,
  connection: connectionLocal,
  describe: describeLocal,
  dbUrls: async (campaignId) => rigDbUrls(campaignId),
  apiKeys: {
    store: async (campaignId, apiKey) => storeApiKey(campaignId, apiKey),
    read: async (campaignId) => readSecrets(campaignId).apiKey,
  },
  openPostgresLog: async (campaignId) => openLocalPostgresLog(campaignId),
  databaseFolders: (campaignId) => {
    const dataDir = readRigRecord(campaignId)?.cluster.dataDir;
    return dataDir ? [dataDir, path.join(dataDir, 'pg_wal')] : [];
  },
  hardware: (_campaignId, declared) => hardwareLocal(declared),
  // The rig lives on the host that provisioned it: that host's data-plane worker reaches it.
  dataQueue: (_campaignId, host) => dataQueue(host),
  pgbenchRunner: async (campaignId) => localPgbenchRunner(rigDbUrls(campaignId).clusterDir),
  // One machine, no zones: bring-up skips the check.
  availabilityZones: async () => undefined,
  workDir: (campaignId) => rigPaths(campaignId).dir,
  leftoverKinds: LOCAL_LEFTOVER_KINDS,
  // Nothing to do: a local rig carries no expiry tag and no reaper looks for one; its watchdog's
  // deadline (in the workflow) is the only clock it has.
  extendExpiry: async () => {},
  applySettings: applySettingsLocal,
  startLoadNodes: startLoadNodesLocal,
};

export { cleanCheckLocal, connectionLocal, provisionLocal, teardownLocal };
export { restartServiceLocal } from './provision';
export { rigDbUrls } from './connection';
export { storeApiKey, readSecrets } from './secrets';
