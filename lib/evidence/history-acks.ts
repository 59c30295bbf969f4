// Acknowledged changes (issue 45 item 4): `rig history ack RUN FIGURE` accepts a known change, so it
// stops alerting. Kept in RUN's own evidence folder (history-acks.json: who, when, why), so it needs
// no Temporal and travels with the folder; later runs' alerts (history-alert.ts) and `rig history`
// read it. Written whole and atomically (lib/evidence/atomic.ts writeAtomic: a reader never sees half
// a file); an ack repeated for the same figure and series is kept once.
import fs from 'node:fs';
import path from 'node:path';
import { writeAtomic } from './atomic';
import { HISTORY_ACKS_FILE } from './layout';
import type { HistoryAck } from '../protocol/history-alert-rule';

export const HISTORY_ACKS_FORMAT = 'rig-history-acks/1';

interface AcksFile {
  format: typeof HISTORY_ACKS_FORMAT;
  acks: HistoryAck[];
}

/** The acks recorded in one campaign folder ([] when none, or the file is not an acks file). */
export function readHistoryAcks(dir: string): HistoryAck[] {
  let f: AcksFile;
  try {
    f = JSON.parse(fs.readFileSync(path.join(dir, HISTORY_ACKS_FILE), 'utf8')) as AcksFile;
  } catch {
    return [];
  }
  if (f?.format !== HISTORY_ACKS_FORMAT || !Array.isArray(f.acks)) return [];
  return f.acks.filter((a) => typeof a?.run === 'string' && typeof a.figure === 'string' && (a.series === null || typeof a.series === 'string'));
}

/** Records an ack in its run's folder; false when the same figure and series were acknowledged there already. */
export function recordHistoryAck(dir: string, ack: HistoryAck): { added: boolean; existing: HistoryAck | null } {
  const acks = readHistoryAcks(dir);
  const existing = acks.find((a) => a.figure === ack.figure && a.series === ack.series) ?? null;
  if (existing) return { added: false, existing };
  const file: AcksFile = { format: HISTORY_ACKS_FORMAT, acks: [...acks, ack] };
  writeAtomic(path.join(dir, HISTORY_ACKS_FILE), JSON.stringify(file, null, 2) + '\n');
  return { added: true, existing: null };
}
