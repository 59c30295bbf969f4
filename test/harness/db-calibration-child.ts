// A campaign's calibrate-database step in its own process, for a test that kills it mid-case
// (test/targets/db-calibration.test.ts): `node --import tsx test/harness/db-calibration-child.ts
// CAMPAIGN`, with RIG_STATE_DIR (the local rig) and RIG_RESULTS (its evidence) from the parent. It runs
// the step as a worker does (activities/db-calibrate.ts, the real local target), except that once the
// time-zone case has changed the cluster's log_timezone, the step's next look at the server log prints
// "holding" and blocks the event loop until the parent kills it: the kill lands mid-case, with
// autovacuum_naptime and log_timezone changed and nothing put back, on a host of any speed.
import fs from 'node:fs';
import { dbCalibrationActivities } from '../../activities/db-calibrate';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { withClient } from '../../lib/targets/db';
import { CALIBRATION_LOG_ZONE } from '../../lib/targets/db-calibration/run';
import { targetFor } from '../../lib/targets/registry';
import type { Target } from '../../lib/targets/target';

const [campaignId] = process.argv.slice(2);
if (!campaignId) {
  console.error('usage: db-calibration-child.ts CAMPAIGN');
  process.exit(2);
}

function holdingInZone(t: Target): Target {
  return {
    ...t,
    openPostgresLog: async (id: string) => {
      const { superuserUrl } = await t.dbUrls(id);
      const tz = await withClient(superuserUrl, async (c) => (await c.query<{ tz: string }>("SELECT current_setting('log_timezone') AS tz")).rows[0].tz);
      if (tz === CALIBRATION_LOG_ZONE) {
        fs.writeSync(1, 'holding\n'); // written before the hold, not buffered behind it
        const cell = new Int32Array(new SharedArrayBuffer(4));
        for (;;) Atomics.wait(cell, 0, 0, 1000);
      }
      return t.openPostgresLog(id);
    },
  };
}

const { calibrateDatabase } = dbCalibrationActivities({ targetFor: (name) => holdingInZone(targetFor(name)) });
calibrateDatabase({ campaignId, rig: { campaignId, target: 'local' } as RigHandle }).then(
  (r) => {
    console.log(`finished without the hold: ${r.summary}`);
    process.exit(1);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
