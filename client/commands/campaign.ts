// rig campaign start|list|watch|cancel|abort|logs|report
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WorkflowNotFoundError } from '@temporalio/client';
import { campaignIdOf } from '../../lib/protocol/campaign-id';
import { followLog } from '../../lib/evidence/follow';
import { resultsDir } from '../../lib/tools/paths';
import { abortSignal } from '../../workflows/messages';
import { watchCampaign } from '../campaign-watch';
import { connectClient, warnMissingSearchAttributes } from '../connect';
import { resultLines } from '../progress-view';
import { loadSpec } from '../spec-input';

export const summary = 'start|list|watch|cancel|abort|logs|report: campaigns on Temporal';

const HELP = `usage:
  rig campaign start SPEC.json|--profile rehearsal|full [--id ID] [--wait]
  rig campaign list [--all]
  rig campaign watch ID
  rig campaign cancel ID          stop now: the current repeat is interrupted, teardown runs
  rig campaign abort ID           finish the current repeat, then tear down and report
  rig campaign logs ID [--follow]
  rig campaign report ID          (same as rig report ID)

start validates the spec before anything runs; --wait follows it and exits non-zero unless every
configuration held. Needs a worker (rig worker) on task queue 'rig'.`;

export const TASK_QUEUE = 'rig';

export function defaultCampaignId(name: string, now = new Date()): string {
  return `${name}-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      profile: { type: 'string' },
      wait: { type: 'boolean' },
      follow: { type: 'boolean', short: 'f' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [action, arg] = positionals;
  if (values.help || !action) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  if (action === 'logs') return logs(arg, Boolean(values.follow));
  if (action === 'report') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const report = require('./report') as { run(argv: string[]): Promise<number> };
    return report.run(arg ? [arg] : []);
  }
  if (action === 'start') {
    const spec = loadSpec({ file: arg, profile: values.profile });
    const rc = await connectClient();
    try {
      await warnMissingSearchAttributes(rc);
      const id = values.id ?? defaultCampaignId(spec.name);
      await rc.client.workflow.start('benchCampaign', { taskQueue: TASK_QUEUE, workflowId: id, args: [spec] });
      console.log(`started campaign ${id} on ${rc.env.address} (watch: rig campaign watch ${id})`);
      if (!values.wait) return 0;
      const result = await watchCampaign(rc.client, id);
      resultLines(result).forEach((l) => console.log(l));
      return result.status === 'held' ? 0 : 1;
    } finally {
      await rc.close();
    }
  }
  const rc = await connectClient();
  try {
    switch (action) {
      case 'list':
        return await list(rc.client, Boolean(values.all));
      case 'watch': {
        if (!arg) throw new Error('rig campaign watch needs a campaign id (rig campaign list shows them)');
        const result = await watchCampaign(rc.client, arg);
        resultLines(result).forEach((l) => console.log(l));
        return result.status === 'held' ? 0 : 1;
      }
      case 'cancel':
        if (!arg) throw new Error('rig campaign cancel needs a campaign id');
        await rc.client.workflow.getHandle(arg).cancel();
        console.log(`cancellation requested for ${arg}: the current step stops, teardown runs`);
        return 0;
      case 'abort':
        if (!arg) throw new Error('rig campaign abort needs a campaign id');
        await rc.client.workflow.getHandle(arg).signal(abortSignal, 'rig campaign abort');
        console.log(`abort signalled to ${arg}: it finishes the current repeat, then tears down and reports`);
        return 0;
      default:
        console.error(`rig campaign: unknown action '${action}'\n\n${HELP}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      console.error(`rig campaign: no campaign '${arg}' on ${rc.env.address} (rig campaign list shows them)`);
      return 1;
    }
    throw err;
  } finally {
    await rc.close();
  }
}

async function list(client: import('@temporalio/client').Client, all: boolean): Promise<number> {
  const rows: string[][] = [['ID', 'TARGET', 'STEP', 'STATUS', 'STARTED']];
  const query = `WorkflowType = 'benchCampaign'${all ? '' : ` AND StartTime > '${new Date(Date.now() - 30 * 86400_000).toISOString()}'`}`;
  for await (const wf of client.workflow.list({ query })) {
    const sa = wf.searchAttributes ?? {};
    const first = (k: string) => (Array.isArray(sa[k]) ? String((sa[k] as unknown[])[0] ?? '') : '');
    rows.push([wf.workflowId, first('RigTarget') || '-', first('RigStep') || '-', first('RigStatus') || wf.status.name.toLowerCase(), wf.startTime.toISOString()]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  if (rows.length === 1) console.log('(no campaigns in the last 30 days; --all for older)');
  return 0;
}

async function logs(id: string | undefined, follow: boolean): Promise<number> {
  if (!id) throw new Error('rig campaign logs needs a campaign id');
  const dir = path.join(resultsDir(), campaignIdOf(id));
  if (!follow && !fs.existsSync(path.join(dir, 'campaign.log'))) {
    console.error(`no log at ${dir}/campaign.log (is RIG_RESULTS the folder the worker writes to?)`);
    return 1;
  }
  // Follow until the campaign has written its result (or Ctrl-C).
  const stop = new AbortController();
  const done = setInterval(() => {
    if (fs.existsSync(path.join(dir, 'result.json'))) setTimeout(() => stop.abort(), 1000);
  }, 500);
  process.once('SIGINT', () => stop.abort());
  try {
    await followLog(dir, (line) => console.log(line), stop.signal, { follow });
  } finally {
    clearInterval(done);
  }
  return 0;
}
