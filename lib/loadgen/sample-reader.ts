// Reads a sample stream (gzip CSV) into columns, refusing anything that is not a complete, valid
// stream: a corrupt row, a truncated file or a broken gzip member is an error naming the line, never
// rows skipped silently. The row format itself is lib/protocol/sample-row.ts.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { SAMPLE_HEADER, SampleColumns, SampleFormatError, isSampleHeader, parseSampleRecord } from '../protocol/sample-row';

export class SampleFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    reason: string,
  ) {
    super(`${file}${line === null ? '' : `: line ${line}`}: ${reason}`);
    this.name = 'SampleFileError';
  }
}

const NL = 10;

export async function readSampleFile(file: string): Promise<SampleColumns> {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    throw new SampleFileError(file, null, 'no such file: give the path of a samples.csv.gz written by `rig measure`');
  }
  // ~20 compressed bytes per row is a fair first guess; the columns grow if it is short.
  const cols = new SampleColumns(Math.max(1024, Math.ceil(size / 8)));
  let line = 0;
  let carry: Buffer | null = null;
  const gunzip = fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(zlib.createGunzip({ chunkSize: 1 << 18 }));
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(NL, start);
        if (nl < 0) break;
        line++;
        if (line === 1) {
          if (!isSampleHeader(buf, start, nl)) {
            throw new SampleFileError(file, 1, `header is '${buf.subarray(start, Math.min(nl, start + 120)).toString('latin1')}', expected '${SAMPLE_HEADER}'`);
          }
        } else {
          parseSampleRecord(buf, start, nl, line, cols);
        }
        start = nl + 1;
      }
      carry = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
    }
  } catch (err) {
    if (err instanceof SampleFileError) throw err;
    if (err instanceof SampleFormatError) throw new SampleFileError(file, err.line, err.reason);
    const code = (err as NodeJS.ErrnoException).code;
    const msg = (err as Error).message;
    if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(msg)) {
      throw new SampleFileError(file, line + 1, `truncated: the gzip stream ends after line ${line} (the file was cut while being written); refusing a partial stream`);
    }
    throw new SampleFileError(file, line + 1, `corrupt gzip data after line ${line}: ${msg}`);
  }
  if (carry && carry.length > 0) {
    throw new SampleFileError(file, line + 1, 'truncated: the last line has no newline (the stream was cut mid-row); refusing a partial stream');
  }
  if (line === 0) throw new SampleFileError(file, 1, `empty stream: no header line '${SAMPLE_HEADER}'`);
  return cols;
}
