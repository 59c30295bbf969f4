// The aws target's Postgres log window (Target.openPostgresLog): RDS keeps the server's log on the
// instance, readable only through its API. Opened when a repeat's load starts, read when it ends:
// - DescribeDBLogFiles with FileLastWritten = the moment the window opened (epoch ms) names every
//   file written since (RDS rotates postgresql.log.YYYY-MM-DD-HH hourly, so a window can span two);
//   paginated by Marker.
// - DownloadDBLogFilePortion from Marker "0" in blocks of NumberOfLines, passing back each response's
//   Marker until AdditionalDataPending is false (the paging the API reference describes; one
//   response is at most 1 MB).
// - A file written during the window also holds what came before it in that hour: lines stamped
//   before the window's first second are dropped. RDS's default log_line_prefix starts each entry
//   with its time ("2024-05-01 12:00:03 UTC:..."); a line without one (a statement's continuation)
//   goes with the entry above it. The two clocks are the load host's and the instance's: both run
//   NTP (Amazon Time Sync), and the cut is at whole seconds.
import { DescribeDBLogFilesCommand, DownloadDBLogFilePortionCommand, type RDSClient } from '@aws-sdk/client-rds';
import type { PostgresLogWindow } from '../../target';
import { awsClients, type AwsClients } from '../clients';

/** Lines per DownloadDBLogFilePortion call (RDS truncates a response at 1 MB and says so with a Marker). */
export const LOG_BLOCK_LINES = 10_000;

/** Log files written at or after `since` (epoch ms), oldest first. */
export async function logFilesSince(rds: RDSClient, dbInstanceIdentifier: string, since: number): Promise<Array<{ name: string; lastWritten: number; size: number }>> {
  const files: Array<{ name: string; lastWritten: number; size: number }> = [];
  let marker: string | undefined;
  do {
    const out = await rds.send(new DescribeDBLogFilesCommand({ DBInstanceIdentifier: dbInstanceIdentifier, FileLastWritten: since, Marker: marker }));
    for (const f of out.DescribeDBLogFiles ?? []) if (f.LogFileName) files.push({ name: f.LogFileName, lastWritten: f.LastWritten ?? 0, size: f.Size ?? 0 });
    marker = out.Marker;
  } while (marker);
  return files.sort((a, b) => a.lastWritten - b.lastWritten || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A whole log file, block by block. */
export async function downloadLogFile(rds: RDSClient, dbInstanceIdentifier: string, logFileName: string): Promise<string> {
  let text = '';
  let marker = '0';
  for (;;) {
    const out = await rds.send(new DownloadDBLogFilePortionCommand({ DBInstanceIdentifier: dbInstanceIdentifier, LogFileName: logFileName, Marker: marker, NumberOfLines: LOG_BLOCK_LINES }));
    text += out.LogFileData ?? '';
    if (!out.AdditionalDataPending) return text;
    // A pending response without a new marker would loop for ever: stop and say so in the text.
    if (!out.Marker || out.Marker === marker) return `${text}\n[rig: ${logFileName}: AdditionalDataPending with no new Marker after ${marker}; the rest was not read]\n`;
    marker = out.Marker;
  }
}

const STAMP = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)? (UTC|GMT)\b/;

/** The entries of `text` stamped at or after `since` (epoch ms, cut at its whole second) (pure). */
export function linesSince(text: string, since: number): string {
  const from = Math.floor(since / 1000) * 1000;
  const out: string[] = [];
  let keep = false;
  for (const line of text.split('\n')) {
    const m = STAMP.exec(line);
    if (m) keep = Date.parse(`${m[1].replace(' ', 'T')}Z`) >= from;
    if (keep) out.push(line);
  }
  const joined = out.join('\n');
  return joined && !joined.endsWith('\n') ? `${joined}\n` : joined;
}

/**
 * Opens the window now; read() returns what the server logged since (''  when nothing). Pass the
 * rig's region (clients are made and closed per read) or clients a caller owns.
 */
export async function openAwsPostgresLog(clientsOrRegion: string | Pick<AwsClients, 'rds'>, dbInstanceIdentifier: string, now: () => number = Date.now): Promise<PostgresLogWindow> {
  const openedAt = now();
  return {
    async read() {
      const owned = typeof clientsOrRegion === 'string' ? awsClients(clientsOrRegion) : null;
      const rds = owned ? owned.rds : (clientsOrRegion as Pick<AwsClients, 'rds'>).rds;
      try {
        let text = '';
        for (const f of await logFilesSince(rds, dbInstanceIdentifier, openedAt)) text += linesSince(await downloadLogFile(rds, dbInstanceIdentifier, f.name), openedAt);
        return text;
      } finally {
        owned?.destroy();
      }
    },
  };
}
