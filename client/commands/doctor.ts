// rig doctor: where the rig (its client and every worker on this machine) will connect, and where
// each setting came from, then one connect to show it works. Secrets are masked (connection-sources.ts).
import { defineCommand } from '../command';
import { connectClient } from '../connect';
import { EXIT } from '../exit-codes';
import { isNoAnswer } from '../../lib/tools/unreachable';
import { loadConnection } from '../../lib/temporal/connection-env';
import { describeConnection, formatSettings } from '../../lib/temporal/connection-sources';
import { deploymentName, routing } from '../../lib/temporal/deployment';
import { resolveBuildId } from '../../lib/tools/build-id';

export const summary = 'show where the rig connects to Temporal (profile, temporal.toml, TEMPORAL_* variables, TLS, API key) and try it';

const HELP = `usage: rig doctor [--offline]

Prints the Temporal connection the rig's client and workers will use, the way the \`temporal\` CLI
resolves it: TEMPORAL_* variables first, then the profile TEMPORAL_PROFILE names (default "default")
in temporal.toml (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml), then the rig's
defaults (127.0.0.1:7233, namespace default). Each setting says where it came from; the API key, a
client key and gRPC header values are masked. Also the Worker Deployment version a \`rig worker\` here
would poll as (deployment, build id and where the id came from). Then it connects, describes the
namespace and says which build of the deployment is current.
  --offline   print the settings only, do not connect
  exit 0  settings read (and, unless --offline, the namespace answered);  exit 2  refused settings
  or usage;  exit 69  Temporal could not be reached (the reason, and what to change)`;

export const { run, actions, syntax } = defineCommand({
  summary,
  help: HELP,
  options: { offline: { type: 'boolean' } },
  async run({ values }) {
    let loaded;
    try {
      loaded = loadConnection();
    } catch (err) {
      console.error(`rig doctor: the connection settings are refused: ${(err as Error).message}`);
      return EXIT.USAGE;
    }
    console.log('Temporal connection (TEMPORAL_* variables over the temporal.toml profile, as the temporal CLI):');
    formatSettings(describeConnection(loaded)).forEach((l) => console.log(l));
    const build = await resolveBuildId().then(
      (b) => `${deploymentName()} / ${b.buildId}   from ${b.from}`,
      (err: Error) => `none: ${err.message}`,
    );
    console.log(`worker version: ${build}`);
    if (values.offline) return 0;
    try {
      const rc = await connectClient(loaded.env);
      try {
        const info = await rc.client.connection.workflowService.getSystemInfo({});
        const ns = await rc.client.connection.workflowService.describeNamespace({ namespace: loaded.env.namespace });
        console.log(`reachable: yes, ${loaded.env.address} (server ${info.serverVersion || 'version not given'}), namespace ${ns.namespaceInfo?.name} (${ns.namespaceInfo?.state === 1 ? 'registered' : `state ${String(ns.namespaceInfo?.state)}`})`);
        const { current, ramping } = await routing(rc.client.connection.workflowService, loaded.env.namespace, deploymentName());
        console.log(`deployment ${deploymentName()}: ${current ? `current build ${current}` : 'no current build (the first rig worker makes its own current)'}${ramping ? `, ramping ${ramping}` : ''}`);
      } finally {
        await rc.close();
      }
      return 0;
    } catch (err) {
      console.error(`reachable: no: ${(err as Error).message}`);
      return isNoAnswer(err) ? EXIT.UNREACHABLE : EXIT.FAILED;
    }
  },
});
