// Atomic file writes: the bytes go to a temporary file in the SAME folder (so the final step is a
// rename within one filesystem), are flushed to disk, and only then take the final name. A reader,
// or a crash, never sees half a file under the final name.
//
// Two flavours:
// - writeAtomic: replaces whatever is there (the manifest, a report written with --out);
// - writeOnce:   refuses to replace a file that holds different bytes (evidence). The final step is
//   link(2), which fails when the name exists, so two writers cannot both "win". Writing the SAME
//   bytes again is a no-op, which is what makes a retried activity safe.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class EvidenceExistsError extends Error {
  constructor(readonly file: string) {
    super(`${file} already exists with different content: evidence is written once and never rewritten (write to a new attempt folder instead)`);
    this.name = 'EvidenceExistsError';
  }
}

/** A temporary name beside `file`: hidden, and recognisable (the manifest skips it). */
export function tempNameFor(file: string): string {
  const dir = path.dirname(file);
  return path.join(dir, `.${path.basename(file)}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
}

/** True for names made by tempNameFor (left behind only by a writer that crashed mid-write). */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.includes('.tmp-');
}

function writeAndSync(tmp: string, data: string | Uint8Array): void {
  const fd = fs.openSync(tmp, 'wx', 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDir(dir: string): void {
  // Makes the new name itself durable. Not every filesystem allows fsync on a folder; the rename is
  // still atomic without it, so a refusal here is not an error.
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    /* best effort */
  }
}

/** Writes `data` to `file` atomically, replacing any previous content. */
export function writeAtomic(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempNameFor(file);
  try {
    writeAndSync(tmp, data);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  syncDir(path.dirname(file));
}

/** Writes `data` to `file` atomically unless it exists; same bytes again: no-op; other bytes: EvidenceExistsError. */
export function writeOnce(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempNameFor(file);
  try {
    writeAndSync(tmp, data);
    commitOnce(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * Gives the finished temporary file `tmp` the name `file` unless it exists (see writeOnce). For large
 * files written as a stream (the sample stream): write to tempNameFor(file), close it, then commit.
 * `tmp` is gone afterwards in every case but an error.
 */
export function commitOnce(tmp: string, file: string): void {
  if (path.dirname(path.resolve(tmp)) !== path.dirname(path.resolve(file))) {
    throw new Error(`commitOnce: ${tmp} must be in the same folder as ${file} (a rename across folders may cross filesystems)`);
  }
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!sameContent(tmp, file)) throw new EvidenceExistsError(file);
    } else if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
      // A filesystem without hard links: check, then rename (a narrow race, no worse than most tools).
      if (fs.existsSync(file)) {
        if (!sameContent(tmp, file)) throw new EvidenceExistsError(file);
      } else {
        fs.renameSync(tmp, file);
        syncDir(path.dirname(file));
        return;
      }
    } else {
      throw err;
    }
  }
  fs.rmSync(tmp, { force: true });
  syncDir(path.dirname(file));
}

function sameContent(a: string, b: string): boolean {
  const sa = fs.statSync(a);
  const sb = fs.statSync(b);
  if (sa.size !== sb.size) return false;
  return fileSha256Sync(a) === fileSha256Sync(b);
}

export function fileSha256Sync(file: string, limit = Infinity): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let pos = 0;
    while (pos < limit) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, limit - pos), pos);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}
