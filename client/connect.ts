// A Temporal client for the `rig` commands, connected the way the `temporal` CLI connects
// (lib/temporal/connection-env.ts: TEMPORAL_* variables over a temporal.toml profile).
import { Client, Connection } from '@temporalio/client';
import { connectionOptions, connectWithin, temporalEnv, type TemporalEnv } from '../lib/temporal/connection-env';
import { missingSearchAttributes, searchAttributeCommands } from '../lib/temporal/search-attributes';

export interface RigClient {
  client: Client;
  env: TemporalEnv;
  close(): Promise<void>;
}

/**
 * gRPC's reconnect backoff, capped: grpc-js grows it to 120 s, so a command that waits through a
 * Temporal outage (client/temporal-outage.ts) would go on failing for up to two minutes after the
 * server is back. Capped at 5 s it notices within seconds; one connect attempt per 5 s costs nothing.
 */
const RECONNECT = { 'grpc.initial_reconnect_backoff_ms': 1_000, 'grpc.max_reconnect_backoff_ms': 5_000 };

export async function connectClient(env: TemporalEnv = temporalEnv()): Promise<RigClient> {
  const connection = await connectWithin(env, () => Connection.connect({ ...connectionOptions(env), connectTimeout: '5 seconds', channelArgs: RECONNECT }));
  return { client: new Client({ connection, namespace: env.namespace }), env, close: () => connection.close() };
}

/** Says so, with the commands to fix it, when the cluster lacks the rig's search attributes. */
export async function warnMissingSearchAttributes(rc: RigClient, print: (line: string) => void = (l) => console.error(l)): Promise<void> {
  let missing: string[];
  try {
    missing = await missingSearchAttributes(rc.client.connection, rc.env.namespace);
  } catch (err) {
    print(`note: could not find out the search attributes of ${rc.env.namespace} on ${rc.env.address} (${(err as Error).message}); campaigns run without them`);
    return;
  }
  if (missing.length === 0) return;
  print(`note: ${rc.env.address} lacks the rig's search attributes ${missing.join(', ')}; campaigns run, but without step/status in the Web UI. To add them:`);
  for (const cmd of searchAttributeCommands(missing, rc.env.namespace, rc.env.address)) print(`  ${cmd}`);
}
