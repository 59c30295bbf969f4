// Evidence rows are appended to their file as they are taken (evidence is written before it is
// summarised), one JSON object per line. Writes are serialized so lines never interleave.
import fs from 'node:fs';
import path from 'node:path';

export class JsonlWriter {
  private chain: Promise<void> = Promise.resolve();
  private failed: Error | undefined;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }

  write(row: unknown): Promise<void> {
    const line = JSON.stringify(row) + '\n';
    this.chain = this.chain.then(() => fs.promises.appendFile(this.file, line)).catch((err: Error) => {
      this.failed = err;
    });
    return this.chain;
  }

  /** Resolves when everything written so far is in the file; rethrows a write error. */
  async flush(): Promise<void> {
    await this.chain;
    if (this.failed) throw this.failed;
  }
}

export function readJsonl<T>(file: string): T[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
