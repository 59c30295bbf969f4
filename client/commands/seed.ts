// `rig seed --rows N [--campaign ID]`: COPY N history rows into the fixtures' partition of a local rig,
// then settle until autovacuum is idle. The work is lib/targets/seed.ts.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { resolveCampaign } from '../../lib/targets/local/find-rig';
import { seed } from '../../lib/targets/seed';
import { checkpointLine } from '../../lib/targets/checkpoint';
import { progressPrinter } from '../progress-line';

export const summary = 'COPY history rows into the fixtures\' partition of a local rig, then settle autovacuum';

const HELP = `usage: rig seed --rows N [--campaign ID] [--livemode true|false] [--days 30]
                [--settle-timeout SECONDS] [--no-settle] [--tenant ID] [--tag TAG]

  --rows N            rows of history to COPY into usage_events (required)
  --campaign ID       the local rig (default: the only provisioned one)
  --livemode MODE     the partition you expect; refused when the fixtures are in the other one
                      (default: the fixtures' mode)
  --days D            history span before now (default 30)
  --settle-timeout S  give up waiting for autovacuum after S seconds (default 900)
  --no-settle         do not wait for autovacuum (rehearsals only: a campaign always settles)
  --tag TAG           the seed's tag (default: a fresh one, so each run adds N rows); the same tag
                      again resumes an interrupted run: only the rows not yet in are copied`;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      rows: { type: 'string' },
      campaign: { type: 'string' },
      livemode: { type: 'string' },
      days: { type: 'string' },
      tenant: { type: 'string' },
      tag: { type: 'string' },
      'settle-timeout': { type: 'string' },
      'no-settle': { type: 'boolean' },
    },
  async run({ values }) {
    const rows = Number(values.rows);
    if (!values.rows || !Number.isSafeInteger(rows) || rows < 1) {
      throw new UsageError(`--rows must be a positive integer (got ${values.rows ?? 'nothing'})`);
    }
    if (values.livemode !== undefined && values.livemode !== 'true' && values.livemode !== 'false') {
      throw new UsageError(`--livemode must be true or false, not ${values.livemode}`);
    }
    const days = values.days === undefined ? 30 : Number(values.days);
    const settleTimeout = values['settle-timeout'] === undefined ? 900 : Number(values['settle-timeout']);
    if (!(days > 0) || !(settleTimeout > 0)) {
      throw new UsageError('--days and --settle-timeout must be positive numbers');
    }
    const campaignId = resolveCampaign(values.campaign);
    const urls = rigDbUrls(campaignId);
    const bar = progressPrinter();
    let settling = false;
    const res = await seed({
      ownerUrl: urls.ownerUrl,
      rows,
      days,
      tenantId: values.tenant,
      tag: values.tag,
      livemode: values.livemode === undefined ? undefined : values.livemode === 'true',
      settle: values['no-settle'] ? false : { timeoutMs: settleTimeout * 1000 },
      checkpointUrl: urls.superuserUrl,
      onProgress: (p) => {
        if (p.phase === 'count') return;
        if (p.phase === 'copy') bar.update(p.rows, p.total, `${fmt(p.rows)}/${fmt(p.total)} rows, ${fmt(p.rowsPerSec)} rows/s`);
        else {
          if (!settling) bar.end();
          settling = true;
          const s = p.settle;
          if (s) {
            bar.note(
              `settling (${(p.elapsedMs / 1000).toFixed(0)} s): vacuum running ${s.vacuuming}, analyze running ${s.analyzing}, ` +
                `inserted since vacuum ${fmt(s.nInsSinceVacuum)}, modified since analyze ${fmt(s.nModSinceAnalyze)}`,
            );
          }
        }
      },
    });
    bar.end();
    console.log(
      `seeded ${fmt(res.rows)} rows (tag ${res.tag}) into tenant ${res.tenantId}, livemode=${res.livemode}: ` +
        (res.alreadyIn > 0 ? `${fmt(res.alreadyIn)} already in, ${fmt(res.copiedRows)} copied in ` : '') +
        `${res.copySeconds.toFixed(1)} s, ${fmt(res.rowsPerSec)} rows/s; ${fmt(res.verifiedRows)} verified in the partition` +
        (res.settle ? `; settled in ${res.settle.seconds.toFixed(0)} s` : '; not settled (--no-settle)') +
        (res.checkpoint ? `; ${checkpointLine(res.checkpoint)}` : ''),
    );
    return 0;
  },
});
