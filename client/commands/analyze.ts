// `rig analyze SAMPLES.csv.gz`: every statistic and gate re-derived from a raw sample stream alone.
// A truncated or corrupt stream is refused with the line named: no row is ever skipped. A stream
// alone cannot say whether the database stored what was acknowledged: without --reconcile the verdict
// is at best UNRECONCILED (exit 3), never PASS; and without --p99-limit-ms a sustained repeat is
// NOT JUDGED (exit 4): no threshold, no PASS. The stream's own plan (its #plan record) is what its
// delivery is judged against; a foreign stream's is given with --rate and --seconds; without either
// the delivery is not judged, and the verdict is NOT JUDGED too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineCommand } from '../command';
import { mergeNodeStreams } from '../../lib/loadgen/merge-streams';
import { NodeMergeRefusal } from '../../lib/protocol/node-merge';
import { nodeRows, type NodeRow } from '../../lib/protocol/node-gates';
import { analyzeRead } from '../../lib/loadgen/analyze-file';
import { SampleFileError, readSampleFile } from '../../lib/loadgen/sample-reader';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { formatRunReport } from '../../lib/protocol/run-report';
import { INGEST, type SampleColumns } from '../../lib/protocol/sample-row';
import { PlanError, flagsPlan, type StreamPlan } from '../../lib/protocol/stream-plan';
import { DEFAULT_PROBE_P99_MS, notJudged } from '../../lib/protocol/verdicts';
import { EXIT, VERDICT_EXIT_CODE } from '../exit-codes';
import { UsageError, numberFlag, reconcileFlag, wholeNumberFlag } from '../parse-flags';

export const summary = 'every statistic and gate of a repeat, re-derived from its samples.csv.gz';

const HELP = `usage: rig analyze SAMPLES.csv.gz [--json] [--reconcile rows=N,quantity=Q] [--p99-limit-ms MS] [options]
       rig analyze NODE0.csv.gz NODE1.csv.gz ... [options]   one repeat's load nodes' streams, in node order:
                          each checked on its share of the schedule, merged by intended time and judged
                          as one stream, each node's instrument on its own (a row per node)

  --json                  the report as JSON (samples, dropped, failed, delivered_rate, p50_ms, p99_ms,
                          worst_10s_p99_ms, drift, freeze_seconds, freeze_cadence_s, windows, probe, gate, ...)
  --reconcile rows=N,quantity=Q   what the database holds for the run tag: checks reconciliation
  --p99-limit-ms MS       the configuration's p99 threshold (default: none: a sustained repeat is then
                          NOT JUDGED, exit 4)
  --drift-limit X         (default 1.5)
  --probe-p99-ms MS       the probe's p99 budget (default ${DEFAULT_PROBE_P99_MS})
  --kind sustained|ladder|ceiling   which gate to apply (default sustained; a ceiling's stream is a
                          closed loop's: its ingest rows may share an intended time, others may not)
  --seconds S             the repeat's configured length, whole seconds: a row intended after it is
                          refused (default: the stream's plan, else the stream's last second)
  --rate R                a foreign stream's plan (one without its own #plan record): R events/s
                          offered for --seconds S; its rows are held to that plan's schedule exactly
                          as to a plan of its own (a row off it is refused, naming its line), and
                          delivery is judged second by second. A stream with its own plan takes no --rate
  --batch B               events per request of that plan (default: the batch every ingest row carries)

Delivery is judged against the plan: the stream's own (rig measure writes it), or --rate/--seconds;
without one it is not judged ("delivery not judged: no plan") and the verdict is NOT JUDGED (exit 4).

Percentiles are nearest-rank on exact values; buckets are by intended time (lib/protocol).
exit: 0 PASS; 99 FAIL; 2 bad input, or a truncated or corrupt stream (the line is named);
3 UNRECONCILED (every check that ran passed, but without --reconcile the rows were not checked);
4 NOT JUDGED (every check that ran passed, but a sustained repeat without --p99-limit-ms has no
threshold, or the stream no plan, or drift undecided: a third too few samples for a p99, or
the drift's 95 % interval straddles the limit: not a PASS);
130 CUT SHORT (the stream's plan says its run was cut short: never a pass).`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      json: { type: 'boolean' },
      reconcile: { type: 'string' },
      'p99-limit-ms': { type: 'string' },
      'drift-limit': { type: 'string' },
      'probe-p99-ms': { type: 'string' },
      kind: { type: 'string' },
      seconds: { type: 'string' },
      rate: { type: 'string' },
      batch: { type: 'string' },
    },
  positionals: true,
  async run({ values, positionals }) {
    const str = (k: keyof typeof values) => values[k] as string | undefined;
    try {
      if (positionals.length === 0) throw new UsageError('give a sample stream (a samples.csv.gz), or a repeat\'s load nodes\' streams in node order');
      const kind = (str('kind') ?? 'sustained') as 'sustained' | 'ladder' | 'ceiling';
      if (!['sustained', 'ladder', 'ceiling'].includes(kind)) throw new UsageError(`--kind must be sustained, ladder or ceiling, got '${kind}'`);
      const reconciliation = reconcileFlag(str('reconcile'));
      const p99LimitMs = numberFlag(str('p99-limit-ms'), '--p99-limit-ms', '50') ?? null;
      const driftLimit = numberFlag(str('drift-limit'), '--drift-limit', '1.5');
      const probeP99Ms = numberFlag(str('probe-p99-ms'), '--probe-p99-ms', '500');
      const seconds = wholeNumberFlag(str('seconds'), '--seconds', '600');
      const rate = numberFlag(str('rate'), '--rate', '1000');
      const batch = wholeNumberFlag(str('batch'), '--batch', '10');
      if (rate !== undefined && seconds === undefined) throw new UsageError('--rate needs --seconds: a plan is a rate for a length, e.g. --rate 1000 --seconds 600');
      if (batch !== undefined && rate === undefined) throw new UsageError('--batch is part of a foreign stream\'s plan: give it with --rate and --seconds');
      if (positionals.length > 1) {
        if (rate !== undefined || seconds !== undefined) throw new UsageError('load nodes\' streams carry their own plans (each its share): drop --rate/--batch/--seconds');
        return await analyzeNodes(positionals, { kind, p99LimitMs, driftLimit, reconciliation, probeP99Ms, json: Boolean(values.json) });
      }
      const file = positionals[0];
      const columns = await readSampleFile(file, { closedLoop: kind === 'ceiling' });
      const plan = rate === undefined ? null : foreignPlan(columns, rate, batch, seconds as number);
      if (columns.plan && seconds !== undefined && seconds !== columns.plan.seconds) {
        throw new UsageError(`the stream carries its own plan of ${columns.plan.seconds} s; --seconds ${seconds} differs: drop --seconds (the plan is what it was offered)`);
      }
      const analysis = analyzeRead(file, columns, { durationS: seconds, plan });
      const { report } = evaluateRun(analysis, { kind, p99LimitMs, driftLimit, reconciliation, probeP99Ms });
      console.log(values.json ? JSON.stringify(report, null, 2) : formatRunReport(report));
      const why = report.verdict.state === 'NOT JUDGED' ? notJudged(report.gate) : [];
      if (why.includes('no threshold')) console.error('rig analyze: NOT JUDGED (no threshold): give --p99-limit-ms MS (the configuration\'s p99 limit) to judge it');
      if (why.includes('no plan')) console.error('rig analyze: NOT JUDGED (no plan): the stream carries no plan; give --rate R --seconds S (what was offered) to judge its delivery');
      if (report.verdict.state === 'UNRECONCILED') console.error('rig analyze: UNRECONCILED: give --reconcile rows=N,quantity=Q (what the database holds for the run tag) to judge it');
      return VERDICT_EXIT_CODE[report.verdict.state];
    } catch (err) {
      if (err instanceof NodeMergeRefusal) {
        console.error(`rig analyze: ${err.message}`);
        return EXIT.USAGE;
      }
      if (err instanceof PlanError) {
        console.error(`rig analyze: --rate/--batch/--seconds: ${err.message}`);
        return EXIT.USAGE;
      }
      if (err instanceof UsageError || err instanceof SampleFileError) {
        console.error(`rig analyze: ${err.message}`);
        return EXIT.USAGE;
      }
      throw err;
    }
  },
});

/** One repeat's load nodes' streams: merged (each on its share), judged as one, a row per node. */
async function analyzeNodes(
  files: string[],
  o: { kind: 'sustained' | 'ladder' | 'ceiling'; p99LimitMs: number | null; driftLimit?: number; reconciliation: ReturnType<typeof reconcileFlag>; probeP99Ms?: number; json: boolean },
): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-analyze-nodes-'));
  try {
    const tag = (await readSampleFile(files[0])).plan?.run_tag?.replace(/\.n0$/, '') ?? 'merged';
    const merged = await mergeNodeStreams(files, path.join(dir, 'samples.csv.gz'), tag);
    const columns = await readSampleFile(merged.out);
    const analysis = analyzeRead(merged.out, columns);
    const rows = nodeRows(merged.nodes.map((n) => n.analysis), o.p99LimitMs);
    const { report } = evaluateRun(analysis, { kind: o.kind, p99LimitMs: o.p99LimitMs, driftLimit: o.driftLimit, reconciliation: o.reconciliation, probeP99Ms: o.probeP99Ms, nodes: rows });
    if (o.json) console.log(JSON.stringify({ ...report, nodes: rows }, null, 2));
    else console.log(`${formatRunReport(report)}\n${nodeLines(rows, merged.latency.percentile(99)).join('\n')}`);
    return VERDICT_EXIT_CODE[report.verdict.state];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function nodeLines(rows: readonly NodeRow[], mergedP99Us: number): string[] {
  const ms = (us: number | null) => (us === null ? '—' : (us / 1000).toFixed(3));
  return [
    `load nodes: ${rows.length}, merged p99 ${ms(mergedP99Us)} ms (histograms added, never averaged)`,
    ...rows.map(
      (r) =>
        `  node ${r.node} (${r.run_tag ?? '—'}): offered ${r.offered}, dropped ${r.dropped}, failed ${r.failed}, p99 ${ms(r.p99_us)} ms, schedule lag p99 ${ms(r.schedule_lag_p99_us)} ms, stalls ${r.stall_seconds.length}; instrument ${r.instrument.passed === false ? 'LATE' : r.instrument.passed ? 'ok' : 'not judged'}: ${r.instrument.detail}`,
    ),
  ];
}

/** The plan --rate/--batch/--seconds give a stream without its own; the batch defaults to its rows'. */
function foreignPlan(columns: SampleColumns, rate: number, batch: number | undefined, seconds: number): StreamPlan {
  if (columns.plan) throw new UsageError(`the stream carries its own plan (${columns.plan.rate ?? '—'} ev/s, batch ${columns.plan.batch}, ${columns.plan.seconds} s): drop --rate/--batch, the plan is what it was offered`);
  let b = batch;
  if (b === undefined) {
    const seen = new Set<number>();
    for (let i = 0; i < columns.length && seen.size < 2; i++) if (columns.scenario[i] === INGEST) seen.add(columns.events[i]);
    if (seen.size !== 1) throw new UsageError(`--batch is needed: the stream's ingest rows ${seen.size ? 'carry different batches' : 'are none'}, so the plan's requests per second cannot be told from them`);
    b = [...seen][0];
  }
  return flagsPlan(rate, b, seconds);
}
