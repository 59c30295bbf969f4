// `rig replay`: before a worker with new code is deployed, replay the histories of the namespace's
// campaigns, watchdogs and leases (open and closed; a PINNED campaign never runs another build, so it
// is left out) against this checkout's workflows. Exit 0 when every one
// replays, 1 naming each that does not (a change that needs patched(): docs/architecture.md, "Changing workflows").
import { defineCommand } from '../command';
import { connectClient } from '../connect';
import { DEFAULT_REPLAY_QUERY, OPEN_REPLAY_QUERY, replayNamespace } from '../../lib/temporal/replay';
import { numberFlag, UsageError } from '../parse-flags';

export const summary = "replay the namespace's campaign and watchdog histories against this code (before deploying a worker)";

const HELP = `usage: rig replay [--open | --query Q] [--limit N]

Replays the histories of the rig's workflows (benchCampaign, rigWatchdog, hostLease) in the namespace
the rig connects to (as the \`temporal\` CLI would: TEMPORAL_* variables, the TEMPORAL_PROFILE of
temporal.toml; \`rig doctor\` shows which) against this checkout's workflow code, most recent first.
The gate before a deploy: \`rig replay --open\` with the new code, against the executions still
running that a worker with that code would take over (a kept rig's watchdog, a host's lease, a
campaign started before workers were versioned). A PINNED campaign is left out: it finishes on the
build it started on and never runs this code. A change that would strand one fails here, naming the workflow and the command: put
it behind patched() (docs/architecture.md, "Changing workflows") and replay again.
  --open      only the open executions, pinned ones left out (${OPEN_REPLAY_QUERY})
  --query Q   a visibility query (default: every execution, open or closed, pinned ones left out: ${DEFAULT_REPLAY_QUERY})
  --limit N   at most N histories (default 100)
  exit 0  every history replays;  exit 1  some do not (each named, with the error);  exit 2  usage`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: { open: { type: 'boolean' }, query: { type: 'string' }, limit: { type: 'string' } },
  async run({ values }) {
    const limit = numberFlag(values.limit, '--limit', '100') ?? 100;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new UsageError(`--limit must be a whole number above 0, got '${values.limit}': e.g. --limit 100`);
    }
    if (values.open && values.query !== undefined) throw new UsageError('--open and --query go one at a time: --open is the query ' + OPEN_REPLAY_QUERY);
    const query = values.open ? OPEN_REPLAY_QUERY : values.query;
    const rc = await connectClient();
    try {
      const outcomes = await replayNamespace(rc.client, {
        query,
        limit,
        onOutcome: (o) => (o.error ? console.error(`FAIL ${o.workflowId}: ${o.error}`) : console.log(`ok   ${o.workflowId}`)),
      });
      const failed = outcomes.filter((o) => o.error);
      const line = `${outcomes.length - failed.length}/${outcomes.length} histories replay against this code (${rc.env.address}, namespace ${rc.env.namespace})`;
      if (failed.length) console.error(`${line}; do not deploy: ${failed.map((o) => o.workflowId).join(', ')}`);
      else console.log(line);
      return failed.length ? 1 : 0;
    } finally {
      await rc.close();
    }
  },
});
