// `rig measure`: one standalone repeat against any Hardcount-compatible endpoint. Open loop by default
// (closed loop for a ceiling); writes the sample stream and verdict.json into --out, prints the
// verdict, and exits non-zero when the ingest gate or the probe fails.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { readCustomersFile } from '../../lib/loadgen/customers';
import { LoadOptionsError, type LoadOptions } from '../../lib/loadgen/options';
import { PreflightError } from '../../lib/loadgen/preflight';
import { runLoad, type ProgressLine } from '../../lib/loadgen/run-load';
import { evaluateRun } from '../../lib/protocol/evaluate';
import { formatRunReport } from '../../lib/protocol/run-report';
import { DEFAULT_PROBE_P99_MS } from '../../lib/protocol/verdicts';
import { UsageError, numberFlag, reconcileFlag } from '../parse-flags';

export const summary = 'one measured repeat (open loop, or --closed-loop) against a Hardcount-compatible URL';

const HELP = `usage: rig measure --url URL --rate EV_PER_S --batch B --seconds S --out DIR [options]

Offers RATE events/s (RATE/B requests/s) on a fixed schedule for S seconds, whatever the server does,
writes DIR/samples.csv.gz (one row per request) and DIR/verdict.json, prints the verdict.
The API key is read from env RIG_API_KEY.

  --url URL               root of the API (e.g. http://127.0.0.1:8080)
  --rate EV_PER_S         offered events per second (open loop)
  --batch B               events per request, 1..1000
  --seconds S             length of the repeat (>= 1)
  --out DIR               where samples.csv.gz and verdict.json go
  --max-in-flight N       request slots; a request due with none free is dropped (default: 1 s of requests, 32..2000)
  --probe-rate R          probe requests/s reading aggregate, invoices, customers (default 0 = off)
  --probe-p99-ms MS       the probe's p99 budget (default ${DEFAULT_PROBE_P99_MS})
  --customers FILE        customer external ids, one per line (default: the target's GET /v1/customers)
  --meter KEY             meter of every event (default api_calls)
  --run-tag TAG           properties.rig_run of every event (default generated)
  --p99-limit-ms MS       the configuration's p99 threshold (default: none)
  --drift-limit X         last-third / first-third p99 limit (default 1.5)
  --reconcile rows=N,quantity=Q   what the database holds for the run tag: checks reconciliation
  --closed-loop --workers V       V workers each waiting for its reply: a ceiling, not a service level
  --quiet                 no progress lines

exit: 0 passed; 1 the gate or the probe failed; 2 bad input or the target refused the pre-flight;
130 cut short (SIGINT/SIGTERM: the stream is still valid up to then).`;

export async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        rate: { type: 'string' },
        batch: { type: 'string' },
        seconds: { type: 'string' },
        out: { type: 'string' },
        'max-in-flight': { type: 'string' },
        'probe-rate': { type: 'string' },
        'probe-p99-ms': { type: 'string' },
        customers: { type: 'string' },
        meter: { type: 'string' },
        'run-tag': { type: 'string' },
        'p99-limit-ms': { type: 'string' },
        'drift-limit': { type: 'string' },
        reconcile: { type: 'string' },
        'closed-loop': { type: 'boolean' },
        workers: { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`rig measure: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const str = (k: string) => values[k] as string | undefined;
  let opts: LoadOptions;
  let p99Limit: number | undefined;
  let driftLimit: number | undefined;
  let probeBudget: number;
  let reconciliation;
  try {
    if (!str('url')) throw new UsageError('--url is required: the root of the API, e.g. --url http://127.0.0.1:8080');
    if (!str('out')) throw new UsageError('--out DIR is required: where samples.csv.gz and verdict.json are written');
    const closed = values['closed-loop'] === true;
    const req = (flag: string, example: string) => {
      const v = numberFlag(str(flag), `--${flag}`, example);
      if (v === undefined) throw new UsageError(`--${flag} is required: e.g. --${flag} ${example}`);
      return v;
    };
    opts = {
      url: str('url') as string,
      mode: closed ? 'closed' : 'open',
      rate: closed ? undefined : req('rate', '1000'),
      batch: req('batch', '10'),
      seconds: req('seconds', '600'),
      workers: closed ? req('workers', '16') : undefined,
      maxInFlight: numberFlag(str('max-in-flight'), '--max-in-flight', '1000'),
      probeRate: numberFlag(str('probe-rate'), '--probe-rate', '5'),
      customers: str('customers') ? readCustomersFile(str('customers') as string) : undefined,
      meter: str('meter'),
      runTag: str('run-tag'),
      out: path.resolve(str('out') as string, 'samples.csv.gz'),
    };
    p99Limit = numberFlag(str('p99-limit-ms'), '--p99-limit-ms', '50');
    driftLimit = numberFlag(str('drift-limit'), '--drift-limit', '1.5');
    probeBudget = numberFlag(str('probe-p99-ms'), '--probe-p99-ms', '500') ?? DEFAULT_PROBE_P99_MS;
    reconciliation = reconcileFlag(str('reconcile'));
  } catch (err) {
    console.error(`rig measure: ${(err as Error).message}`);
    return 2;
  }

  const outDir = path.dirname(opts.out);
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (!ac.signal.aborted) console.error(`rig measure: ${sig}: stopping the load, flushing the sample stream...`);
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = (p: ProgressLine) => {
    if (values.quiet) return;
    const probe = p.probe ? `  probe ${p.probe.done} done${p.probe.failed ? ` ${p.probe.failed} failed` : ''}${p.probe.dropped ? ` ${p.probe.dropped} dropped` : ''}` : '';
    console.error(
      `[${String(p.second).padStart(4)}s] offered ${p.offered} sent ${p.sent} done ${p.done} dropped ${p.dropped} failed ${p.failed} p99 ${p.p99_ms === null ? '—' : `${p.p99_ms.toFixed(1)} ms`} in flight ${p.in_flight}${probe}`,
    );
  };
  try {
    fs.mkdirSync(outDir, { recursive: true });
    const res = await runLoad(opts, progress, { signal: ac.signal });
    const { analysis } = await analyzeFile(res.stream, { durationS: res.interrupted ? undefined : res.options.seconds });
    const { report } = evaluateRun(analysis, {
      kind: res.options.mode === 'closed' ? 'ceiling' : 'sustained',
      p99LimitMs: p99Limit ?? null,
      driftLimit,
      reconciliation,
      probeP99Ms: probeBudget,
      interrupted: res.interrupted,
    });
    const { customers, ...shownOptions } = res.options;
    const verdictFile = path.join(outDir, 'verdict.json');
    fs.writeFileSync(
      verdictFile,
      `${JSON.stringify({ run_tag: res.options.runTag, options: { ...shownOptions, customers: customers.length }, load: res.summary, report }, null, 2)}\n`,
    );
    console.log(formatRunReport(report));
    console.log(`samples: ${res.stream}\nverdict: ${verdictFile}${res.interrupted ? `\nCUT SHORT (${res.summary.reason}): the stream is valid and complete up to the stop, but this is not a repeat` : ''}`);
    if (res.interrupted) return 130;
    return report.verdict.passed ? 0 : 1;
  } catch (err) {
    if (err instanceof LoadOptionsError || err instanceof PreflightError) {
      console.error(`rig measure: ${err.message}`);
      return 2;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
