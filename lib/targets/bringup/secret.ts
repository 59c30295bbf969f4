// A value that must not reach a log: the API key fixtures mint. It prints as [redacted] through
// console.log, util.inspect, String() and JSON.stringify; only reveal() gives the value, so a leak has
// to be written on purpose. It is stored for the measurement in a 0600 file (writeSecretFile).
import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}

/**
 * Write a secret to `file` with mode 0600 (also when the file existed with a wider mode): into a
 * temporary file made 0600 from the start, then renamed over the target, so no reader ever sees a
 * partly written or world-readable file.
 */
export function writeSecretFile(file: string, secret: Secret): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, secret.reveal() + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** Read a secret written by writeSecretFile; refuses a file that others can read. */
export function readSecretFile(file: string): Secret {
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) throw new Error(`${file} has mode ${mode.toString(8)}: a secret file must be 0600`);
  return new Secret(fs.readFileSync(file, 'utf8').trim());
}
