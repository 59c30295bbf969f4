// The Postgres log of a local rig for a window of time: the cluster writes one file (postgres.log in
// its folder), so the window is the part of that file written between its opening and its reading,
// found by the file's size at the opening. No clock comparison, no parsing of log lines.
import fs from 'node:fs';
import type { PostgresLogWindow } from '../target';
import { readRigRecord } from './rig-record';

export function openLocalPostgresLog(campaignId: string): PostgresLogWindow {
  const file = readRigRecord(campaignId)?.cluster.logFile;
  const offset = file && fs.existsSync(file) ? fs.statSync(file).size : 0;
  return { read: async () => slice(file, offset) };
}

/** The part of the log written since `offset`. */
function slice(file: string | undefined, offset: number): string {
  if (!file || !fs.existsSync(file)) return '';
  const size = fs.statSync(file).size;
  if (size <= offset) return '';
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    fs.readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
