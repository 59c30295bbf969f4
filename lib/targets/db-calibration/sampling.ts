// The DB sampler as a repeat runs it (lib/evidence/db-sampler.ts, at lib/protocol/db-sampling.ts's
// interval for a load of that length), its rows read back from its file as the page reads them.
import fs from 'node:fs';
import path from 'node:path';
import { startDbSampler } from '../../evidence/db-sampler';
import type { DbSampleRow } from '../../evidence/records';
import { dbSnapshotIntervalMs } from '../../protocol/db-sampling';

/** A deliberate regression, for the calibration's own tests: the case must then fail. */
export interface ProvokedRegressions {
  /** Every group of backends counted as the requests' (a sampler that does not tell whose they are). */
  samplerCountsEveryone?: boolean;
  /** The WAL window ends before the last tenth of the rows (a window cut short). */
  walWindowCutShort?: boolean;
  /** The zone the evidence says the log is in, whatever the cluster said (stamps in CET read as UTC). */
  logTimeZoneRead?: string;
}

export interface RunningSampler {
  stop(): Promise<DbSampleRow[]>;
}

export async function sampleDuring(url: string, requestRole: string, seconds: number, file: string, regressions: ProvokedRegressions = {}): Promise<RunningSampler> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sampler = await startDbSampler({ url, file, intervalMs: dbSnapshotIntervalMs(seconds), requestRole });
  return {
    async stop() {
      await sampler.stop();
      const rows = fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as DbSampleRow);
      return rows.map((r) => provoke(r, regressions));
    },
  };
}

function provoke(r: DbSampleRow, regressions: ProvokedRegressions): DbSampleRow {
  if (!('waits' in r)) return r;
  let out = r;
  if (regressions.samplerCountsEveryone) out = { ...out, waits: out.waits.map((w) => ({ ...w, who: 'request' })) };
  if (regressions.logTimeZoneRead !== undefined && out.settings) out = { ...out, settings: { ...out.settings, named: { ...out.settings.named, log_timezone: regressions.logTimeZoneRead } } };
  return out;
}
