// How the rig reaches Temporal, from the environment (the same variable names as Temporal's own
// environment configuration, so one shell setup serves the `temporal` CLI and the rig):
//   TEMPORAL_ADDRESS                  host:port (default 127.0.0.1:7233, the `rig dev up` server)
//   TEMPORAL_NAMESPACE                default "default"
//   TEMPORAL_API_KEY                  Temporal Cloud API key (implies TLS)
//   TEMPORAL_TLS                      "true" for TLS with the system's trust store
//   TEMPORAL_TLS_CLIENT_CERT_PATH     mTLS client certificate (implies TLS), with
//   TEMPORAL_TLS_CLIENT_KEY_PATH      its key
//   TEMPORAL_TLS_SERVER_CA_CERT_PATH  a private CA
//   TEMPORAL_TLS_SERVER_NAME          SNI override
// Plain data only: both the client (@temporalio/client) and the worker (NativeConnection) take it.
import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

export interface TemporalEnv {
  address: string;
  namespace: string;
  tls?: TLSConfig;
  apiKey?: string;
}

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

function readFileVar(name: string, env: NodeJS.ProcessEnv): Buffer | undefined {
  const p = env[name];
  if (!p) return undefined;
  try {
    return fs.readFileSync(p);
  } catch (err) {
    throw new Error(`${name}=${p} cannot be read: ${(err as Error).message}`);
  }
}

export function temporalEnv(env: NodeJS.ProcessEnv = process.env): TemporalEnv {
  const address = env.TEMPORAL_ADDRESS || DEFAULT_TEMPORAL_ADDRESS;
  const namespace = env.TEMPORAL_NAMESPACE || 'default';
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const crt = readFileVar('TEMPORAL_TLS_CLIENT_CERT_PATH', env);
  const key = readFileVar('TEMPORAL_TLS_CLIENT_KEY_PATH', env);
  if (Boolean(crt) !== Boolean(key)) {
    throw new Error('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: set both for mTLS, or neither');
  }
  const ca = readFileVar('TEMPORAL_TLS_SERVER_CA_CERT_PATH', env);
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const wantTls = env.TEMPORAL_TLS === 'true' || Boolean(apiKey) || Boolean(crt) || Boolean(ca);
  const tls: TLSConfig | undefined = wantTls
    ? {
        ...(crt && key ? { clientCertPair: { crt, key } } : {}),
        ...(ca ? { serverRootCACertificate: ca } : {}),
        ...(serverName ? { serverNameOverride: serverName } : {}),
      }
    : undefined;
  return { address, namespace, tls, apiKey };
}

/** Runs `connect`, failing within `timeoutMs` with a message that names the address and how to change it. */
export async function connectWithin<T>(
  address: string,
  connect: () => Promise<T>,
  timeoutMs = Number(process.env.RIG_TEMPORAL_CONNECT_TIMEOUT_MS ?? 10_000),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`cannot reach Temporal at ${address} within ${timeoutMs / 1000} s (set TEMPORAL_ADDRESS, or start one with \`rig dev up\`)`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([connect(), deadline]);
  } catch (err) {
    const msg = (err as Error).message;
    if (msg.startsWith('cannot reach Temporal')) throw err;
    throw new Error(`cannot reach Temporal at ${address}: ${msg} (set TEMPORAL_ADDRESS, or start one with \`rig dev up\`)`);
  } finally {
    clearTimeout(timer);
  }
}
