// The repeat's stream from its N load nodes' streams (issue 37): merged by intended time into one
// stream that the reader, the analysis and the gates take exactly as one node's (its `#plan` is the
// whole schedule, marked `"nodes":N`). The rules (all nodes, each complete, each on its own share) are
// lib/protocol/node-merge.ts; this file reads and writes.
//
// Memory is bounded by one node's stream, never the repeat's: each node's stream is read strictly
// (sample-reader.ts: CRC, its plan, its share's schedule, no duplicate) and analysed on its own (its
// instrument is gated on its own: node-gates.ts), then its rows are sorted by intended time into a
// temporary file of fixed-size binary rows beside the output, and the columns are let go. The N
// sorted files are then merged with one row per node in memory, into the SampleWriter of the
// repeat's stream. The temporary files are removed whatever happens.
//
// Each node's ingest latencies (done - sent, µs) are kept as an exact histogram (one bucket per µs):
// merged by adding counts, never by averaging percentiles; its p99 is the merged stream's, exactly.
import fs from 'node:fs';
import path from 'node:path';
import type { RunAnalysis } from '../protocol/analysis';
import { ExactHistogram } from '../protocol/exact-histogram';
import { mergedPlan, NodeMergeRefusal, type NodeStreamFacts } from '../protocol/node-merge';
import { INGEST, STATUS_DROPPED, type SampleColumns } from '../protocol/sample-row';
import type { StreamPlan } from '../protocol/stream-plan';
import { analyzeRead } from './analyze-file';
import { readSampleFile } from './sample-reader';
import { SampleWriter } from './sample-writer';

export interface NodeStream {
  node: number;
  file: string;
  run_tag: string | null;
  rows: number;
  ingest_rows: number;
  probe_rows: number;
  /** The node's stream analysed on its own plan (its share): its own instrument, drops, stalls. */
  analysis: RunAnalysis;
  /** Its ingest latencies (done - sent), exact. */
  latency: ExactHistogram;
}

export interface MergeResult {
  out: string;
  plan: StreamPlan;
  rows: number;
  nodes: NodeStream[];
  /** Every node's latency histogram added: the merged stream's ingest latencies, exactly. */
  latency: ExactHistogram;
}

/** Fields of a row in the temporary sorted files: scenario, intended, sent, done, status, events, quantity. */
const FIELDS = 7;
const ROW_BYTES = FIELDS * 8;
const BLOCK_ROWS = 4096;

/**
 * Merges `files` (node 0's stream first) into `out`, the repeat's stream under run tag `runTag`.
 * Throws NodeMergeRefusal (a node lost, a node off its share) or SampleFileError (a node's stream
 * corrupt), before `out` is written.
 */
export async function mergeNodeStreams(files: readonly string[], out: string, runTag: string): Promise<MergeResult> {
  const temps: string[] = [];
  try {
    const nodes: NodeStream[] = [];
    const facts: NodeStreamFacts[] = [];
    for (let i = 0; i < files.length; i++) {
      // A node whose stream is missing, torn (its process killed) or off its share is a node lost: the
      // repeat is interrupted, never a merge of the others. Its own plan judges its rows: a row outside
      // its share is refused here, naming the file and line.
      let cols: SampleColumns;
      let analysis: RunAnalysis;
      try {
        cols = await readSampleFile(files[i]);
        analysis = analyzeRead(files[i], cols);
      } catch (err) {
        throw new NodeMergeRefusal(i, `node ${i}'s stream cannot be merged (${err instanceof Error ? err.message : String(err)}): the repeat is interrupted and runs again on all ${files.length} nodes; a merge of the others is never counted`);
      }
      const tmp = `${out}.node${i}.sorted.tmp`;
      temps.push(tmp);
      writeSorted(cols, tmp);
      let ingest = 0;
      const latency = new ExactHistogram();
      for (let r = 0; r < cols.length; r++) {
        if (cols.scenario[r] !== INGEST) continue;
        ingest++;
        if (cols.status[r] !== STATUS_DROPPED) latency.record(cols.done[r] - cols.sent[r]);
      }
      nodes.push({ node: i, file: files[i], run_tag: cols.plan?.run_tag ?? null, rows: cols.length, ingest_rows: ingest, probe_rows: cols.length - ingest, analysis, latency });
      facts.push({ plan: cols.plan, ingestRows: ingest, probeRows: cols.length - ingest });
    }
    const plan = mergedPlan(facts, runTag);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const rows = await kWayMerge(temps, out, plan);
    const latency = new ExactHistogram();
    for (const n of nodes) latency.add(n.latency);
    return { out, plan, rows, nodes, latency };
  } finally {
    for (const t of temps) fs.rmSync(t, { force: true });
  }
}

/** One node's rows, ascending by (intended, scenario), as fixed-size binary rows. */
function writeSorted(cols: SampleColumns, file: string): void {
  const n = cols.length;
  const key = new Float64Array(n);
  // intended x 4 + scenario is below 2^53 (intended < 7 days in µs): one numeric key, one typed sort.
  for (let i = 0; i < n; i++) key[i] = cols.intended[i] * 4 + cols.scenario[i];
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => key[a] - key[b]);
  const fd = fs.openSync(file, 'w');
  try {
    const block = new Float64Array(BLOCK_ROWS * FIELDS);
    let at = 0;
    const flush = () => {
      if (at) fs.writeSync(fd, new Uint8Array(block.buffer, 0, at * 8));
      at = 0;
    };
    for (const i of order) {
      block[at++] = cols.scenario[i];
      block[at++] = cols.intended[i];
      block[at++] = cols.sent[i];
      block[at++] = cols.done[i];
      block[at++] = cols.status[i];
      block[at++] = cols.events[i];
      block[at++] = cols.quantity[i];
      if (at === block.length) flush();
    }
    flush();
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads one sorted file a block at a time. */
class SortedRows {
  private readonly fd: number;
  private readonly buf = new Float64Array(BLOCK_ROWS * FIELDS);
  private len = 0;
  private pos = 0;
  /** The current row's offset in buf, or -1 at the end. */
  at = -1;

  constructor(file: string) {
    this.fd = fs.openSync(file, 'r');
    this.next();
  }

  get key(): number {
    return this.buf[this.at + 1] * 4 + this.buf[this.at];
  }

  row(): Float64Array {
    return this.buf.subarray(this.at, this.at + FIELDS);
  }

  next(): void {
    if (this.pos >= this.len) {
      const got = fs.readSync(this.fd, new Uint8Array(this.buf.buffer), 0, this.buf.byteLength, null);
      this.len = Math.floor(got / ROW_BYTES) * FIELDS;
      this.pos = 0;
      if (this.len === 0) {
        this.at = -1;
        return;
      }
    }
    this.at = this.pos;
    this.pos += FIELDS;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Merges the sorted files into the repeat's stream; returns its row count. */
async function kWayMerge(files: readonly string[], out: string, plan: StreamPlan): Promise<number> {
  const inputs = files.map((f) => new SortedRows(f));
  const writer = new SampleWriter(out, plan);
  try {
    // N is small (load nodes): a linear scan for the smallest head is cheaper than a heap.
    for (;;) {
      let best = -1;
      let bestKey = Infinity;
      for (let j = 0; j < inputs.length; j++) {
        if (inputs[j].at < 0) continue;
        const k = inputs[j].key;
        if (k < bestKey) {
          bestKey = k;
          best = j;
        }
      }
      if (best < 0) break;
      const r = inputs[best].row();
      writer.row(r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
      inputs[best].next();
    }
  } finally {
    for (const i of inputs) i.close();
  }
  await writer.close({ cutShort: false, reason: null });
  return writer.rows;
}
