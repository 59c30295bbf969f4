// `rig report DIR|CAMPAIGN_ID [--format md|html|json] [--out FILE] [--baseline OTHER] [--seal]`:
// the published page, rebuilt from the campaign's evidence folder alone (no database, no Temporal).
// The work is lib/evidence/report; this file parses arguments, prints, and maps outcomes to exit codes.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { writeAtomic } from '../../lib/evidence/atomic';
import { buildManifest, EvidenceIntegrityError, readManifest } from '../../lib/evidence/manifest';
import { buildReport, EvidenceFormatError, REPORT_FORMATS, renderReport, resolveCampaignDir, type ReportFormat } from '../../lib/evidence/report';
import { EXIT } from '../exit-codes';

export const summary = 'rebuild the results page from a campaign folder (md, html or json); --baseline compares two campaigns';

const HELP = `usage: rig report DIR|CAMPAIGN_ID [--format md|html|json] [--out FILE] [--baseline OTHER [--tolerance PCT]] [--seal]

Rebuilds the whole results page from the campaign's evidence folder alone: every figure is re-derived
from the raw sample streams, checked against the manifest first. The same evidence gives the same
bytes (no generation timestamp; dates come from the evidence).

  DIR|CAMPAIGN_ID   an evidence folder, or a campaign id under RIG_RESULTS (default state/results)
  --format FMT      md (default), html (one self-contained file with charts, opens offline) or json
  --out FILE        write the page there (atomically) instead of printing it
  --baseline OTHER  compare with another campaign (folder or id): per configuration, the pass counts,
                    and p50/p99 by the rank interval of the shift from both campaigns' repeats
                    (Mann-Whitney, 95 %; 3 repeats a side are too few to call any change);
                    a regression (lost passes, or p50/p99 surely worse) exits 99
  --tolerance PCT   the smallest p50/p99 shift that counts, as PCT % of the baseline's median
                    (default 0: any shift the interval is sure of)
  --seal            build manifest.json first, for a campaign that stopped before its report step
                    (refused when the folder already has one)

exit 0  the page was produced (and, with --baseline, nothing regressed)
exit 99 a regression against the baseline (the page is still produced)
exit 2  usage, or a folder that is not a campaign's evidence
exit 1  the evidence does not match its manifest: the file(s) are named, nothing is reported`;

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => stream.write(text, (err) => (err ? reject(err) : resolve())));
}

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      format: { type: 'string' },
      out: { type: 'string', short: 'o' },
      baseline: { type: 'string' },
      tolerance: { type: 'string' },
      seal: { type: 'boolean' },
    },
  positionals: true,
  async run({ values, positionals }) {
    if (positionals.length !== 1) {
      throw new UsageError(`give exactly one campaign folder or id (got ${positionals.length})`);
    }
    const format = (values.format ?? 'md') as ReportFormat;
    if (!REPORT_FORMATS.includes(format)) {
      throw new UsageError(`--format must be one of ${REPORT_FORMATS.join(', ')}, got '${values.format}'`);
    }
    const tolerancePct = values.tolerance === undefined ? 0 : Number(values.tolerance);
    if (!(Number.isFinite(tolerancePct) && tolerancePct >= 0 && tolerancePct < 100)) {
      throw new UsageError(`--tolerance must be a percentage within 0..100, e.g. --tolerance 5, got '${values.tolerance}'`);
    }
    if (values.tolerance !== undefined && !values.baseline) {
      throw new UsageError('--tolerance applies to --baseline; give the baseline campaign too');
    }
    let dir: string;
    let baselineDir: string | undefined;
    try {
      dir = resolveCampaignDir(positionals[0]);
      if (values.baseline) baselineDir = resolveCampaignDir(values.baseline);
    } catch (err) {
      console.error(`rig report: ${(err as Error).message}`);
      return 2;
    }
    try {
      if (values.seal) {
        let sealed = true;
        try {
          readManifest(dir);
        } catch {
          sealed = false;
        }
        if (sealed) {
          console.error(`rig report: ${dir} is already sealed (manifest.json exists); --seal never rebuilds a manifest over evidence that may have changed`);
          return 2;
        }
        const m = await buildManifest(dir);
        console.error(`rig report: sealed ${dir}: manifest.json lists ${m.files.length} files`);
      }
      const model = await buildReport(dir, { baselineDir, tolerancePct });
      const page = renderReport(model, format);
      if (values.out) {
        writeAtomic(values.out, page);
        console.error(`rig report: wrote ${values.out}`);
      } else {
        await write(process.stdout, page);
      }
      if (model.baseline) {
        console.error(model.baseline.summary);
        return model.baseline.regression ? EXIT.NOT_HELD : EXIT.OK;
      }
      return 0;
    } catch (err) {
      if (err instanceof EvidenceIntegrityError) {
        console.error(`rig report: ${err.message}`);
        return EXIT.FAILED;
      }
      if (err instanceof EvidenceFormatError) {
        console.error(`rig report: ${err.message}`);
        return 2;
      }
      throw err;
    }
  },
});
