// A window of a growing log file: the part written between the window's opening and its reading,
// found by the file's size at the opening. No clock comparison, no parsing of log lines. The local
// rig's Postgres log is read this way, and so is the cluster that stands in for RDS under the emulator.
import fs from 'node:fs';
import type { PostgresLogWindow } from '../targets/target';

export function openFileLogWindow(file: string | undefined): PostgresLogWindow {
  const offset = file && fs.existsSync(file) ? fs.statSync(file).size : 0;
  return { read: async () => slice(file, offset) };
}

/** The part of the file written since `offset`. */
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
