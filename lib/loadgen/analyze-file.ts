// A sample stream on disk, analysed: the gzip reader (here, with the I/O) feeding the pure analysis
// (lib/protocol). What `rig analyze`, `rig measure` and calibration share. A row the analysis refuses
// (outside the plan's schedule, lib/protocol/stream-plan.ts) is refused like a corrupt one, naming the
// file and the line.
import { analyzeSamples, type AnalyzeOptions, type RunAnalysis } from '../protocol/analysis';
import { SampleFormatError, type SampleColumns } from '../protocol/sample-row';
import { SampleFileError, readSampleFile, type ReadSampleOptions } from './sample-reader';

export interface AnalyzedFile {
  rows: number;
  columns: SampleColumns;
  analysis: RunAnalysis;
}

export async function analyzeFile(file: string, opts: AnalyzeOptions & ReadSampleOptions = {}): Promise<AnalyzedFile> {
  const columns = await readSampleFile(file, { closedLoop: opts.closedLoop });
  return { rows: columns.length, columns, analysis: analyzeRead(file, columns, opts) };
}

/** The analysis of `file`'s columns, already read; a refused row is a SampleFileError naming the file. */
export function analyzeRead(file: string, columns: SampleColumns, opts: AnalyzeOptions = {}): RunAnalysis {
  try {
    return analyzeSamples(columns, opts);
  } catch (err) {
    if (err instanceof SampleFormatError) throw new SampleFileError(file, err.line, err.reason);
    throw err;
  }
}
