// rig deploy check|set-current: the last step of a deploy (docs/deploying.md), with the
// check the server leaves out: every host queue the current build has polled, idle ones included,
// must have a poller of the new build (lib/temporal/set-current-check.ts).
import { defineCommand, requiredPositional } from '../command';
import { connectClient } from '../connect';
import { EXIT } from '../exit-codes';
import { deploymentName, type DeploymentVersion } from '../../lib/temporal/deployment';
import { makeCurrentChecked, uncoveredQueues, uncoveredRefusal, UncoveredQueuesError } from '../../lib/temporal/set-current-check';
import { resolveBuildId } from '../../lib/tools/build-id';
import { numberFlag, UsageError } from '../parse-flags';

export const summary = 'check|set-current: make a build the current one once every host queue has a worker of it';

const HELP = `usage: rig deploy check|set-current [--build-id B] [--wait SECONDS]

  check        say which of the rig's queues (rig, rig-host-<host>, rig-data-<host>) that the current
               build has polled, idle ones included, have no poller of build B (exit 0 none, 1 some)
  set-current  the same check, then make B the current version of the Worker Deployment
               '${deploymentName()}' (RIG_DEPLOYMENT): new campaigns start on it, the old build drains
               (exit 0 done, 1 refused naming each queue without a worker of B)
  --build-id B the build (default: this checkout's, as its rig worker polls: RIG_BUILD_ID, else the commit)
  --wait S     ask again for up to S seconds while a queue has no poller of B (default 15: a worker
               that has just started registers its polls within seconds)

The server's own check (temporal worker deployment set-current-version) passes over a queue with no
backlog: an idle host's queue, which a kept rig's watchdog would later send its teardown to.`;

const ACTIONS = ['check', 'set-current'] as const;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  // Each action's help starts with its own usage line, then the whole text (the two share their flags).
  actionHelp: Object.fromEntries(ACTIONS.map((a) => [a, `usage: rig deploy ${a} [--build-id B] [--wait SECONDS]\n\n${HELP.split('\n').slice(2).join('\n')}`])),
  options: { 'build-id': { type: 'string' }, wait: { type: 'string' } },
  positionals: true,
  async run({ values, positionals }) {
    const action = requiredPositional(positionals, 0, 'action', ACTIONS);
    const wait = numberFlag(values.wait, '--wait', '15') ?? 15;
    if (!(wait >= 0)) throw new UsageError(`--wait must be a number of seconds (0 or more), got '${values.wait}': e.g. --wait 15`);
    const buildId = values['build-id'] ?? (await resolveBuildId()).buildId;
    const next: DeploymentVersion = { deploymentName: deploymentName(), buildId };
    const rc = await connectClient();
    try {
      const service = rc.client.workflowService;
      if (action === 'check') {
        const c = await uncoveredQueues(service, rc.env.namespace, next);
        if (!c.current) console.log(`deployment ${next.deploymentName} has no current build: nothing to cover`);
        else if (c.uncovered.length) {
          console.error(uncoveredRefusal(next, c));
          return EXIT.FAILED;
        } else console.log(`every queue build ${c.current} has polled has a poller of build ${buildId}: ${c.checked.join(', ') || 'none'}`);
        return EXIT.OK;
      }
      try {
        const previous = await makeCurrentChecked(service, rc.env.namespace, next, `rig deploy set-current (${process.env.USER ?? 'someone'})`, wait * 1000);
        console.log(`build ${buildId} is the current version of deployment ${next.deploymentName}${previous && previous !== buildId ? ` (was ${previous}, which drains: its campaigns finish on it, and its worker exits once drained)` : ''}`);
        return EXIT.OK;
      } catch (err) {
        if (!(err instanceof UncoveredQueuesError)) throw err;
        console.error(`rig deploy set-current: ${err.message}`);
        return EXIT.FAILED;
      }
    } finally {
      await rc.close();
    }
  },
});
