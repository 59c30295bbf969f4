// `rig analyze SAMPLES.csv.gz`: every statistic and gate re-derived from a raw sample stream alone.
// A truncated or corrupt stream is refused with the line named: no row is ever skipped. A stream
// alone cannot say whether the database stored what was acknowledged: without --reconcile the verdict
// is at best UNRECONCILED (exit 3), never PASS; and without --p99-limit-ms a sustained repeat is
// NOT JUDGED (exit 4): no threshold, no PASS.
import { defineCommand } from '../command';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { SampleFileError } from '../../lib/loadgen/sample-reader';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { formatRunReport } from '../../lib/protocol/run-report';
import { DEFAULT_PROBE_P99_MS } from '../../lib/protocol/verdicts';
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
  --seconds S             the repeat's configured length, whole seconds (default: from the stream)

Percentiles are nearest-rank on exact values; buckets are by intended time (lib/protocol).
exit: 0 PASS; 99 FAIL; 2 bad input, or a truncated or corrupt stream (the line is named);
3 UNRECONCILED (every check that ran passed, but without --reconcile the rows were not checked);
4 NOT JUDGED (every check that ran passed, but a sustained repeat without --p99-limit-ms has no
threshold: not a PASS).`;

export const { run } = defineCommand({
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
      const { analysis } = await analyzeFile(positionals[0], { durationS: seconds, closedLoop: kind === 'ceiling' });
      const { report } = evaluateRun(analysis, { kind, p99LimitMs, driftLimit, reconciliation, probeP99Ms });
      console.log(values.json ? JSON.stringify(report, null, 2) : formatRunReport(report));
      if (report.verdict.state === 'NOT JUDGED') console.error('rig analyze: NOT JUDGED (no threshold): give --p99-limit-ms MS (the configuration\'s p99 limit) to judge it');
      if (report.verdict.state === 'UNRECONCILED') console.error('rig analyze: UNRECONCILED: give --reconcile rows=N,quantity=Q (what the database holds for the run tag) to judge it');
      return VERDICT_EXIT_CODE[report.verdict.state];
    } catch (err) {
      if (err instanceof UsageError || err instanceof SampleFileError) {
        console.error(`rig analyze: ${err.message}`);
        return EXIT.USAGE;
      }
      throw err;
    }
  },
});
