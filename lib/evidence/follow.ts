// Reading campaign.log while the campaign writes it (`rig campaign logs ID [--follow]`).
//
// The log is append-only, so following it is reading from where we stopped whenever it grows. Growth
// is noticed by fs.watch on the folder (fast, and works before the file exists) AND by polling
// (fs.watch misses events on some filesystems: network mounts, some containers). Only complete lines
// are handed over; a line being written is held until its newline arrives.
import fs from 'node:fs';
import path from 'node:path';
import { LOG_FILE } from './layout';

export interface FollowOptions {
  /** Keep waiting for new lines until `signal` aborts (default true); false: print what is there and return. */
  follow?: boolean;
  /** Polling interval in ms (default 500). */
  pollMs?: number;
}

/**
 * Calls onLine for every line of <dir>/campaign.log (without its newline), then, when following, for
 * every line appended later, until `signal` aborts. Resolves when done; a missing file is waited for
 * when following, and is an error otherwise.
 */
export async function followLog(dir: string, onLine: (line: string) => void, signal?: AbortSignal, opts: FollowOptions = {}): Promise<void> {
  const file = path.join(dir, LOG_FILE);
  const follow = opts.follow ?? true;
  const pollMs = opts.pollMs ?? 500;
  let pos = 0;
  let carry: Buffer = Buffer.alloc(0);

  const readMore = () => {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < pos) {
        // The log never shrinks unless it was replaced; start over rather than print garbage.
        pos = 0;
        carry = Buffer.alloc(0);
      }
      while (pos < size) {
        const buf = Buffer.allocUnsafe(Math.min(1 << 20, size - pos));
        const n = fs.readSync(fd, buf, 0, buf.length, pos);
        if (n <= 0) break;
        pos += n;
        let data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
        let nl: number;
        while ((nl = data.indexOf(10)) >= 0) {
          onLine(data.subarray(0, nl).toString('utf8').replace(/\r$/, ''));
          data = data.subarray(nl + 1);
        }
        carry = Buffer.from(data);
      }
    } finally {
      fs.closeSync(fd);
    }
    return true;
  };

  const found = readMore();
  if (!follow) {
    if (!found) throw new Error(`${file} does not exist: no campaign has written evidence there (check the id, or RIG_RESULTS)`);
    if (carry.length) onLine(carry.toString('utf8'));
    return;
  }
  if (signal?.aborted) return;

  await new Promise<void>((resolve, reject) => {
    let watcher: fs.FSWatcher | undefined;
    let finished = false;
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      watcher?.close();
      clearInterval(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve();
    };
    const tick = () => {
      try {
        readMore();
      } catch (err) {
        finish(err);
      }
    };
    const onAbort = () => {
      tick(); // whatever arrived just before the stop
      finish();
    };
    const timer = setInterval(tick, pollMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      fs.mkdirSync(dir, { recursive: true });
      watcher = fs.watch(dir, (_event, name) => {
        if (!name || name === LOG_FILE) tick();
      });
      watcher.on('error', () => {
        /* polling carries on */
      });
    } catch {
      watcher = undefined; // polling alone
    }
  });
}

/** The log's lines as they are now (complete lines only; `limitBytes`: only the first bytes, e.g. a manifest's prefix). */
export function readLogLines(dir: string, limitBytes = Infinity): string[] {
  const file = path.join(dir, LOG_FILE);
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return [];
  }
  if (Number.isFinite(limitBytes)) buf = buf.subarray(0, limitBytes);
  const text = buf.toString('utf8');
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line still being written
  return lines.map((l) => l.replace(/\r$/, ''));
}
