// `rig analyze SAMPLES.csv.gz`: every statistic and gate re-derived from a raw sample stream alone.
// A truncated or corrupt stream is refused with the line named: no row is ever skipped. A stream
// alone cannot say whether the database stored what was acknowledged: without --reconcile the verdict
// is at best UNRECONCILED (exit 3), never PASS; and without --p99-limit-ms a sustained repeat is
// NOT JUDGED (exit 4): no threshold, no PASS. The stream's own plan (its #plan record) is what its
// delivery is judged against; a foreign stream's is given with --rate and --seconds; without either
// the delivery is not judged, and the verdict is NOT JUDGED too.
import { defineCommand } from '../command';
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

export const { run, actions } = defineCommand({
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
      if (positionals.length !== 1) throw new UsageError(`give exactly one sample stream (a samples.csv.gz), got ${positionals.length}`);
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
