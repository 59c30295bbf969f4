// A sample stream on disk, analysed: the gzip reader (here, with the I/O) feeding the pure analysis
// (lib/protocol). What `rig analyze`, `rig measure` and calibration share.
import { analyzeSamples, type AnalyzeOptions, type RunAnalysis } from '../protocol/analysis';
import type { SampleColumns } from '../protocol/sample-row';
import { readSampleFile, type ReadSampleOptions } from './sample-reader';

export interface AnalyzedFile {
  rows: number;
  columns: SampleColumns;
  analysis: RunAnalysis;
}

export async function analyzeFile(file: string, opts: AnalyzeOptions & ReadSampleOptions = {}): Promise<AnalyzedFile> {
  const columns = await readSampleFile(file, { closedLoop: opts.closedLoop });
  return { rows: columns.length, columns, analysis: analyzeSamples(columns, opts) };
}
