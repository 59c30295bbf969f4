// The Postgres log of a local rig for a window of time: the cluster writes one file (postgres.log in
// its folder), so the window is the part of that file written between its opening and its reading.
import { openFileLogWindow } from '../../evidence/file-log-window';
import type { PostgresLogWindow } from '../target';
import { readRigRecord } from './rig-record';

export function openLocalPostgresLog(campaignId: string): PostgresLogWindow {
  return openFileLogWindow(readRigRecord(campaignId)?.cluster.logFile);
}
