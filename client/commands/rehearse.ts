// rig rehearse (and `npm start`): the whole campaign on this machine, end to end (the dry run of
// examples/rehearsal.json gives its plan: rig campaign start examples/rehearsal.json --dry-run): a dev server if none answers, a worker in this process, the `rehearsal` profile on the
// local rig, and the At-a-glance table at the end.
import { defineCommand } from '../command';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { temporalEnv, DEFAULT_TEMPORAL_ADDRESS } from '../../lib/temporal/connection-env';
import { portAnswers } from '../../lib/tools/free-port';
import { UnreachableError } from '../../lib/tools/unreachable';
import { hostName } from '../../lib/tools/host-name';
import { rehearsalExitCode, rehearsalVerdictLine } from '../rehearsal-exit';
import { notCurrentRefusal, rehearsalWorkers } from '../rehearsal-workers';
import { watchCampaign } from '../campaign-watch';
import { connectClient, warnMissingSearchAttributes } from '../connect';
import { devStatus, devUp } from '../dev-server';
import { resultLines } from '../progress-view';
import { loadSpec } from '../spec-input';
import { assertLocalMachineCanRun } from '../local-preflight';
import { UsageError } from '../parse-flags';
import { assertWritable, writeSummary } from '../summary-export';
import { driftWarnings, sampleWarnings } from '../../lib/protocol/plan';
import { withServiceCommand } from '../service-flag';
import { defaultCampaignId, givenCampaignId, TASK_QUEUE } from './campaign';
import { printAtAGlance } from '../at-a-glance';
import { pinnedToThisMachine } from '../rehearsal-pin';

export const summary = 'run the rehearsal campaign end to end on this machine (dev server + worker in process)';

const HELP = `usage: rig rehearse [SPEC.json | --profile rehearsal] [--id ID] [--require-held]
                    [--service-command "PROGRAM ARG..." [--service-cwd DIR]] [--allow-unjudgeable]
                    [--summary-export FILE]

Starts a Temporal dev server (rig dev up) when nothing answers at TEMPORAL_ADDRESS, runs a worker in
this process (or uses the rig worker already running here), runs the campaign on the local rig and
prints the At-a-glance table, why each failed repeat failed, and the report's path.
  exit 0  the rig ran end to end (calibrated, every repeat judged, torn down clean): HELD or NOT-HELD,
          the verdict printed beside it (a NOT-HELD on a VM is often the host: see the host CPU steal)
  exit 1  it did not (refused, uncalibrated, failed, dirty, cancelled)
  exit 99 --require-held only: it ran end to end and the verdict is NOT-HELD
  (npm start is rig rehearse: 0 whenever the rig ran end to end, HELD or NOT-HELD; README "Exit codes")
--service-command measures your own build instead of the reference service: it is started with the
contract of docs/your-service.md (DATABASE_URL, PORT, ...), in --service-cwd (default: here).
--allow-unjudgeable runs a spec whose repeats are too short for the gate's sample minimum (refused
otherwise: every such repeat fails "samples", so it can never be HELD).
--summary-export FILE writes the campaign's end (status, each configuration's passes and verdict,
the report's path) as JSON to FILE, as k6 --summary-export does.
Before anything starts it checks where PostgreSQL's OS user can keep the cluster (as root: a folder
it can reach; RIG_PG_DATA_ROOT chooses one) and that the seed fits the free disk there (exit 2 naming
the folder and the fix). Leaves the dev server it started running (rig dev down stops it).`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: {
    profile: { type: 'string' },
    id: { type: 'string' },
    'require-held': { type: 'boolean' },
    'service-command': { type: 'string' },
    'service-cwd': { type: 'string' },
    'allow-unjudgeable': { type: 'boolean' },
    'summary-export': { type: 'string' },
  },
  positionals: true,
  async run({ values, positionals }) {
    const allowUnjudgeable = values['allow-unjudgeable'] === true;
    const loaded = loadSpec(positionals[0] ? { file: positionals[0], extra: positionals.slice(1), allowUnjudgeable } : { profile: values.profile ?? 'rehearsal', allowUnjudgeable });
    if (values['service-cwd'] !== undefined && values['service-command'] === undefined) throw new UsageError('--service-cwd goes with --service-command');
    const spec = pinnedToThisMachine(values['service-command'] !== undefined ? withServiceCommand(loaded, values['service-command'], values['service-cwd']) : loaded, hostName());
    const id = givenCampaignId(values.id) ?? defaultCampaignId(spec.name);
    assertLocalMachineCanRun(spec, id);
    const exportTo = values['summary-export'];
    if (exportTo !== undefined) assertWritable(exportTo);
    for (const w of [...sampleWarnings(spec), ...driftWarnings(spec)]) console.error(w);
    const env = temporalEnv();
    const [host, port] = env.address.split(':');
    if (!(await portAnswers(host, Number(port ?? 7233)))) {
      if (env.address !== DEFAULT_TEMPORAL_ADDRESS) throw new UnreachableError(`cannot reach Temporal at ${env.address}: nothing answers there (only the default address, ${DEFAULT_TEMPORAL_ADDRESS}, gets a dev server started; \`rig doctor\` shows where ${env.address} comes from)`);
      const { record } = await devUp({ ip: host, port: Number(port), uiPort: Number(port) + 1000 }, (l) => console.log(l));
      console.log(`Temporal dev server on ${record.address}; Web UI: ${record.ui}`);
    }
    // Failures reach the terminal through the campaign's result; the SDK's own warnings would drown the progress line.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    // A rig worker already serving this host takes the campaign; a second one beside it would split its steps.
    // On the dev server this machine's `rig dev up` runs, this tree's build is made current (rehearsal-workers.ts).
    const own = await devStatus({ ip: host, port: Number(port ?? 7233), uiPort: Number(port ?? 7233) + 1000 });
    const workers = await rehearsalWorkers(env, hostName(), own.up && !own.foreign && own.record?.address === env.address);
    if (workers.reused) console.log(`using the rig worker already running on this machine (pid ${workers.reused.pid}, since ${workers.reused.startedAt}); not starting a second one`);
    else if (!workers.current) {
      await workers.stop();
      throw new UsageError(notCurrentRefusal(env.address));
    }
    const rc = await connectClient(env);
    let running = false;
    try {
      await warnMissingSearchAttributes(rc);
      await rc.client.workflow.start('benchCampaign', { taskQueue: TASK_QUEUE, workflowId: id, args: [spec] });
      running = true;
      console.log(`campaign ${id} started (Web UI: workflow ${id}); following it:`);
      // Waits through a Temporal outage (client/temporal-outage.ts): the workers below must stay up
      // until the campaign ends, so only a result, or an error that is no outage, gets past here.
      const result = await watchCampaign(rc.client, id);
      running = false;
      console.log('');
      await printAtAGlance(result);
      resultLines(result).forEach((l) => console.log(l));
      console.log(rehearsalVerdictLine(result, values['require-held']));
      const code = rehearsalExitCode(result, values['require-held']);
      if (exportTo !== undefined) writeSummary(exportTo, result, code);
      return code;
    } finally {
      await rc.close();
      // Stopping without a result leaves the campaign without this process's worker: say what finishes it.
      if (running && !workers.reused) console.error(`rig rehearse: stopped before campaign ${id} ended; it waits for a worker: \`rig worker\` lets it finish (or \`rig campaign cancel ${id}\`)`);
      await workers.stop();
    }
  },
});
