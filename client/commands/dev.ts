// rig dev up|down|status: the local Temporal dev server (see client/dev-server.ts).
import { defineCommand, requiredPositional } from '../command';
import { UsageError } from '../parse-flags';
import { devDown, devStatus, devUp, type DevServerOptions } from '../dev-server';

export const summary = 'up|down|status: a local Temporal dev server whose state survives restarts';

const HELP = `usage: rig dev up|down|status [--ip 127.0.0.1] [--port 7233] [--ui-port 8233]

  up      start the dev server (idempotent); state in state/temporal/dev.db, search attributes
          RigCampaign, RigTarget, RigStep, RigStatus registered
  down    stop the server that 'up' started (only that one)
  status  whether it is up, and where (exit 0 up, 1 down)`;

/** The actions: dispatched and helped from this one list. */
const DEV_ACTIONS = ['up', 'down', 'status'] as const;

const DEV_HELP: Record<string, string> = Object.fromEntries(
  DEV_ACTIONS.map((a) => [a, `usage: rig dev ${a} [--ip 127.0.0.1] [--port 7233] [--ui-port 8233]\n\n${HELP.split('\n').filter((l, i, all) => l.startsWith(`  ${a} `) || (l.startsWith('          ') && all.slice(0, i).reverse().find((x) => !x.startsWith('          '))?.startsWith(`  ${a} `))).join('\n')}`]),
);

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  actionHelp: DEV_HELP,
  options: {
    ip: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '7233' },
    'ui-port': { type: 'string', default: '8233' },
  },
  positionals: true,
  async run({ values, positionals }) {
    const action = requiredPositional(positionals, 0, 'action', DEV_ACTIONS);
    const port = Number(values.port);
    const uiPort = Number(values['ui-port']);
    for (const [flag, v] of [['--port', port], ['--ui-port', uiPort]] as const) {
      if (!Number.isInteger(v) || v < 1 || v > 65535) {
        throw new UsageError(`${flag} must be a TCP port (1-65535)`);
      }
    }
    const opts: DevServerOptions = { ip: values.ip, port, uiPort };
    if (action === 'up') {
      const { record, started } = await devUp(opts, (l) => console.log(l));
      console.log(`Temporal dev server ${started ? 'started' : 'already up'} on ${record.address} (pid ${record.pid})`);
      console.log(`Web UI: ${record.ui}`);
      return 0;
    }
    if (action === 'down') {
      const stopped = await devDown(opts);
      console.log(stopped ? 'Temporal dev server stopped' : 'no dev server started by `rig dev up` is running');
      return 0;
    }
    const status = await devStatus(opts);
    if (status.up && status.record) {
      console.log(`up on ${status.record.address} (pid ${status.record.pid}, since ${status.record.startedAt}); Web UI: ${status.record.ui}`);
      return 0;
    }
    console.log(status.foreign ? `down (but something else answers on ${status.address})` : `down (nothing on ${status.address})`);
    return 1;
  },
});
