// `rig denominator`: pgbench on a local rig's database with the bench row shape, four legs, each
// verified against the rows the table gained. The work is lib/targets/denominator.ts.
import { defineCommand } from '../command';
import { UsageError } from '../parse-flags';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { resolveCampaign } from '../../lib/targets/local/find-rig';
import { denominator, localPgbenchRunner } from '../../lib/targets/denominator';
import { LEGS, type LegName } from '../../lib/targets/pgbench-script';

export const summary = 'pgbench denominator on a local rig: commit-rate, one-row, RLS and multi-row legs, rows verified';

const HELP = `usage: rig denominator [--campaign ID] [--clients 16] [--seconds 60] [--batch 500]
                       [--legs owner-commit,owner-1row,rls-1row,owner-multirow] [--livemode true|false]
                       [--protocol prepared|extended|simple] [--json]

  owner-commit    one one-row INSERT per transaction (batch 1) as the owner: the commit rate
  owner-1row      B one-row INSERTs per transaction as the owner (the spec's denominator)
  rls-1row        the same as hardcount_app with the service's RLS protocol
  owner-multirow  one B-row INSERT per transaction (the floor for #823)
Refuses when --livemode names the mode the fixtures are not in.`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
      campaign: { type: 'string' },
      clients: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '60' },
      batch: { type: 'string', default: '500' },
      legs: { type: 'string' },
      protocol: { type: 'string', default: 'prepared' },
      livemode: { type: 'string' },
      json: { type: 'boolean' },
    },
  async run({ values }) {
    const legs = values.legs ? (values.legs.split(',') as LegName[]) : LEGS;
    const unknown = legs.filter((l) => !LEGS.includes(l));
    if (unknown.length) {
      throw new UsageError(`unknown leg(s) ${unknown.join(', ')}; legs are ${LEGS.join(', ')}`);
    }
    if (values.livemode !== undefined && values.livemode !== 'true' && values.livemode !== 'false') {
      throw new UsageError(`--livemode must be true or false, not ${values.livemode}`);
    }
    if (!['prepared', 'extended', 'simple'].includes(values.protocol)) {
      throw new UsageError(`--protocol must be prepared, extended or simple, not ${values.protocol}`);
    }
    const urls = rigDbUrls(resolveCampaign(values.campaign));
    const res = await denominator({
      ownerUrl: urls.ownerUrl,
      appUrl: urls.appUrl,
      runner: localPgbenchRunner(urls.clusterDir),
      checkpointUrl: urls.superuserUrl,
      clients: Number(values.clients),
      seconds: Number(values.seconds),
      batch: Number(values.batch),
      legs,
      protocol: values.protocol as 'prepared' | 'extended' | 'simple',
      livemode: values.livemode === undefined ? undefined : values.livemode === 'true',
      onProgress: (m) => console.error(m),
    });
    if (values.json) {
      console.log(JSON.stringify(res, null, 2));
      return 0;
    }
    console.log(`tenant ${res.tenantId}, livemode=${res.livemode}`);
    console.log('leg             role             rows/s      tps  latency avg  rows verified');
    for (const l of res.legs) {
      console.log(
        `${l.leg.padEnd(15)} ${l.role.padEnd(16)} ${Math.round(l.rowsPerSec).toLocaleString('en-US').padStart(7)} ${l.tps.toFixed(1).padStart(8)} ${`${l.latencyAvgMs} ms`.padStart(12)}  ${l.countedRows.toLocaleString('en-US')}`,
      );
    }
    return 0;
  },
});
