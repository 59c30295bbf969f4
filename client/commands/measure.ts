// `rig measure`: one standalone repeat against any Hardcount-compatible endpoint. Open loop by default
// (closed loop for a ceiling); writes the sample stream and verdict.json into --out, prints the
// verdict, and exits non-zero unless it is a PASS. A PASS needs reconciliation: with --db the command
// counts the run tag's rows itself (as the owner role, in the fixtures' partition, as the campaign's
// repeat does); with --reconcile the caller gives the counts; without either the verdict is at best
// UNRECONCILED (exit 3), never PASS. A sustained repeat without --p99-limit-ms is NOT JUDGED (exit 4):
// no threshold, no PASS.
import { defineCommand } from '../command';
import fs from 'node:fs';
import path from 'node:path';
import { analyzeFile } from '../../lib/loadgen/analyze-file';
import { readCustomersFile } from '../../lib/loadgen/customers';
import { LoadOptionsError, type ArrivalsInput, type LoadOptions } from '../../lib/loadgen/options';
import { loadArrivals } from '../../lib/loadgen/trace-file';
import { TraceError } from '../../lib/protocol/arrival-trace';
import { ArrivalsSpec } from '../../lib/protocol/workload-spec';
import { PreflightError } from '../../lib/loadgen/preflight';
import { runLoad, type ProgressLine } from '../../lib/loadgen/run-load';
import { evaluateRun } from '../../lib/protocol/evaluate';
import type { Reconciliation } from '../../lib/protocol/gates';
import { formatRunReport } from '../../lib/protocol/run-report';
import { DEFAULT_PROBE_P99_MS, notJudged } from '../../lib/protocol/verdicts';
import { EXIT, VERDICT_EXIT_CODE } from '../exit-codes';
import { isNoAnswer } from '../../lib/tools/unreachable';
import { detectFixtures, type FixtureScope } from '../../lib/targets/fixtures-scope';
import { reconcile } from '../../lib/targets/reconcile';
import { dbFlag, type DbFlag } from '../db-flag';
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
  --arrivals JSON         the schedule's shape, a spec's workload.arrivals (RATE is its base), e.g.
                          '{"shape":"spike","peak":5000,"at":30,"for":30}' or '{"shape":"poisson"}';
                          a trace's file is relative to this folder (default: constant)
  --probe-p99-ms MS       the probe's p99 budget (default ${DEFAULT_PROBE_P99_MS})
  --customers FILE        customer external ids, one per line (default: the target's GET /v1/customers)
  --meter KEY             meter of every event (default api_calls)
  --run-tag TAG           properties.rig_run of every event (default generated)
  --p99-limit-ms MS       the configuration's p99 threshold (default: none: an open-loop repeat is
                          then NOT JUDGED, exit 4)
  --drift-limit X         last-third / first-third p99 limit (default 1.5)
  --db URL                the owner role's database URL (password in PGPASSWORD or the URL; never
                          printed): after the load, counts the run tag's rows and quantity in the
                          fixtures' partition and checks reconciliation (DIR/reconcile.json)
  --reconcile rows=N,quantity=Q   instead of --db: the counts, taken by you, for the run tag
  --closed-loop --workers V       V workers each waiting for its reply: a ceiling, not a service level
  --quiet                 no progress lines

exit: 0 PASS; 99 FAIL (a gate or the probe failed); 2 bad input, or the target or the database
refused the pre-flight; 69 the target or the database did not answer; 3 UNRECONCILED (every check that ran passed, but without --db or --reconcile
the rows were never counted: not a PASS); 4 NOT JUDGED (every check that ran passed, but an
open-loop repeat without --p99-limit-ms has no threshold: not a PASS); 130 cut short (SIGINT/SIGTERM: the stream is still valid
up to then).`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      url: { type: 'string' },
      rate: { type: 'string' },
      batch: { type: 'string' },
      seconds: { type: 'string' },
      out: { type: 'string' },
      'max-in-flight': { type: 'string' },
      'probe-rate': { type: 'string' },
      arrivals: { type: 'string' },
      'probe-p99-ms': { type: 'string' },
      customers: { type: 'string' },
      meter: { type: 'string' },
      'run-tag': { type: 'string' },
      'p99-limit-ms': { type: 'string' },
      'drift-limit': { type: 'string' },
      reconcile: { type: 'string' },
      db: { type: 'string' },
      'closed-loop': { type: 'boolean' },
      workers: { type: 'string' },
      quiet: { type: 'boolean' },
    },
  async run({ values }) {
    const str = (k: keyof typeof values) => values[k] as string | undefined;
    let opts: LoadOptions;
    let p99Limit: number | undefined;
    let driftLimit: number | undefined;
    let probeBudget: number;
    let reconciliation: Reconciliation | null;
    let db: DbFlag | undefined;
    try {
      if (!str('url')) throw new UsageError('--url is required: the root of the API, e.g. --url http://127.0.0.1:8080');
      if (!str('out')) throw new UsageError('--out DIR is required: where samples.csv.gz and verdict.json are written');
      const closed = values['closed-loop'] === true;
      const req = (flag: keyof typeof values & string, example: string) => {
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
        arrivals: arrivalsFlag(str('arrivals')),
      };
      p99Limit = numberFlag(str('p99-limit-ms'), '--p99-limit-ms', '50');
      driftLimit = numberFlag(str('drift-limit'), '--drift-limit', '1.5');
      probeBudget = numberFlag(str('probe-p99-ms'), '--probe-p99-ms', '500') ?? DEFAULT_PROBE_P99_MS;
      reconciliation = reconcileFlag(str('reconcile'));
      db = dbFlag(str('db'));
      if (db && reconciliation) throw new UsageError('give --db URL (the rig counts the rows itself) or --reconcile rows=N,quantity=Q (you counted them), not both');
    } catch (err) {
      console.error(`rig measure: ${(err as Error).message}`);
      return EXIT.USAGE;
    }
    // The database's pre-flight, before anything is offered: the URL answers, as a role that sees the
    // fixtures, and the fixtures name one tenant and one partition to count in.
    let scope: FixtureScope | undefined;
    if (db) {
      try {
        scope = await detectFixtures(db.url, { meterKey: opts.meter });
      } catch (err) {
        console.error(`rig measure: --db ${db.shown}: ${db.scrub((err as Error).message)}: give the owner role's URL of the database the service writes to`);
        return isNoAnswer(err) ? EXIT.UNREACHABLE : EXIT.USAGE;
      }
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
      if (db && scope) reconciliation = await countRunTag(db, scope, res.options.runTag, outDir);
      const { analysis } = await analyzeFile(res.stream, { durationS: res.interrupted ? undefined : res.options.seconds, closedLoop: res.options.mode === 'closed' });
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
      if (report.verdict.state === 'NOT JUDGED' && notJudged(report.gate).includes('no threshold')) {
        console.error('rig measure: NOT JUDGED (no threshold): give --p99-limit-ms MS (the configuration\'s p99 limit) to judge it');
      }
      if (report.verdict.state === 'UNRECONCILED') console.error('rig measure: UNRECONCILED: give --db URL (the owner role\'s) so the rig counts the run tag\'s rows, or --reconcile rows=N,quantity=Q');
      return VERDICT_EXIT_CODE[report.verdict.state];
    } catch (err) {
      if (err instanceof LoadOptionsError || err instanceof PreflightError) {
        console.error(`rig measure: ${err.message}`);
        return err instanceof PreflightError && err.unreachable ? EXIT.UNREACHABLE : EXIT.USAGE;
      }
      throw err;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
});

/**
 * What the database holds for the run tag, as the campaign's repeat counts it (lib/targets/reconcile:
 * as the owner, in the fixtures' partition), written to DIR/reconcile.json before it is judged.
 */
async function countRunTag(db: DbFlag, scope: FixtureScope, runTag: string, outDir: string): Promise<Reconciliation | null> {
  let rec;
  try {
    rec = await reconcile(db.url, { runTag, livemode: scope.livemode, tenantId: scope.tenantId });
  } catch (err) {
    // The load ran and its stream is kept; only the count failed: the verdict is then UNRECONCILED,
    // and `rig analyze --reconcile` can judge the same stream once the rows are counted.
    console.error(`rig measure: --db ${db.shown}: counting run tag ${runTag} failed: ${db.scrub((err as Error).message)}`);
    return null;
  }
  const file = { run_tag: runTag, rows_written: rec.rows, quantity_gained: rec.quantity, livemode: rec.livemode, tenant_id: scope.tenantId, other_mode_rows: rec.otherModeRows, checked_at: new Date().toISOString() };
  fs.writeFileSync(path.join(outDir, 'reconcile.json'), `${JSON.stringify(file, null, 2)}\n`);
  console.log(
    `reconciled run tag ${runTag} in tenant ${scope.tenantId}, livemode=${rec.livemode}: ${rec.rows} rows, quantity ${rec.quantity}${
      rec.otherModeRows ? `; and ${rec.otherModeRows} rows of it in the OTHER partition (livemode=${!rec.livemode}): the service wrote where the fixtures are not` : ''
    }`,
  );
  return { rows_written: rec.rows, quantity_gained: rec.quantity };
}

/** `--arrivals JSON`: a spec's workload.arrivals (workload-spec.ts), a trace's file read here. */
function arrivalsFlag(v: string | undefined): ArrivalsInput | null {
  if (v === undefined) return null;
  let json: unknown;
  try {
    json = JSON.parse(v);
  } catch {
    throw new UsageError(`--arrivals must be JSON, e.g. --arrivals '{"shape":"poisson"}', got ${v}`);
  }
  const parsed = ArrivalsSpec.safeParse(json);
  if (!parsed.success) throw new UsageError(`--arrivals: ${parsed.error.issues.map((i) => `${['arrivals', ...i.path].join('.')}: ${i.message}`).join('; ')}`);
  const a = parsed.data;
  try {
    return loadArrivals({ arrivals: a.shape === 'trace' ? { ...a, file: path.resolve(a.file) } : a });
  } catch (err) {
    if (err instanceof TraceError) throw new UsageError(`--arrivals: ${err.message}`);
    throw err;
  }
}
