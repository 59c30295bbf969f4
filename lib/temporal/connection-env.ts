// How the rig reaches Temporal: the `temporal` CLI's own rules, through @temporalio/envconfig, so
// one shell or one temporal.toml serves the CLI, the rig's client and every rig worker alike.
// Precedence, highest first (each setting on its own):
//   1. TEMPORAL_* variables: ADDRESS, NAMESPACE, API_KEY, TLS (1/true, 0/false),
//      TLS_CLIENT_CERT_PATH|_DATA, TLS_CLIENT_KEY_PATH|_DATA, TLS_SERVER_CA_CERT_PATH|_DATA,
//      TLS_SERVER_NAME, GRPC_META_<HEADER> (an empty value removes that header; every underscore of
//      HEADER becomes a hyphen, as the CLI's envconfig does: NormalizeGRPCMetaKey, strings.ReplaceAll);
//      and, above all of these, the legacy TLS_CERT, TLS_KEY, TLS_CA (+ _DATA), which the CLI still
//      forces over the profile (cliext/client.go)
//   2. the profile TEMPORAL_PROFILE names (else "default") in the file TEMPORAL_CONFIG_FILE names
//      (else $XDG_CONFIG_HOME or ~/.config, then temporalio/temporal.toml)
//   3. the rig's defaults: 127.0.0.1:7233 (`rig dev up`'s server), namespace "default"
// An address with `${namespace}` in it has the namespace put there (the CLI's address template).
// TLS is on when any TLS setting is given, or an API key is (then with the system's trust store),
// unless TEMPORAL_TLS=false or the profile's tls.disabled says otherwise.
// The rig's own rules on top of envconfig's, each refusing something it would quietly get wrong:
// an empty variable counts as unset (GRPC_META_ aside); a TEMPORAL_CONFIG_FILE or TEMPORAL_PROFILE
// that names nothing is an error (envconfig skips a missing file, and would dial the default);
// a client certificate goes with its key; host verification cannot be turned off (the TypeScript
// SDK has no such switch, so the rig refuses rather than silently verify anyway); nor can the
// :authority be set (TEMPORAL_CLIENT_AUTHORITY, a profile's authority: the worker's connection has
// no such option); a TLS file given both as a path and as data is refused, as the CLI refuses it;
// TEMPORAL_TLS is read case-blind and only as 1/0/true/false (the CLI ignores another value, the
// TypeScript envconfig would read it as false).
// `rig doctor` (connection-sources.ts) says where each setting came from.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConfig, loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';
// Internal to envconfig, pinned with it (1.24.0): the raw profile is the only place that still holds
// disable_host_verification, which the public profile drops.
import { tomlLoadClientConfigProfile } from '@temporalio/envconfig/lib/envconfig-toml';
import { diagnoseTls } from './tls-diagnosis';
import { UnreachableError } from '../tools/unreachable';

export interface TemporalEnv {
  address: string;
  namespace: string;
  /** TLS settings; `true`: TLS with the system's trust store; false or absent: plain. */
  tls?: TLSConfig | boolean;
  apiKey?: string;
  /** gRPC headers sent with every call (TEMPORAL_GRPC_META_*, a profile's grpc_meta). */
  metadata?: Record<string, string>;
}

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';
const DEFAULT_PROFILE = 'default';

/** Everything the rig looked at, for `rig doctor`: the settings and where they were found. */
export interface LoadedConnection {
  env: TemporalEnv;
  /** The TEMPORAL_* variables as the rig reads them (empties dropped). */
  vars: Record<string, string>;
  profileName: string;
  configFile: { path?: string; from: 'TEMPORAL_CONFIG_FILE' | 'default location'; found: boolean };
  /** The profile as the file has it (empty when there is no file or no such profile). */
  fileProfile: ClientConfigProfile;
  /** File and variables merged: what the connection is made from. */
  profile: ClientConfigProfile;
}

/** Where the CLI looks for temporal.toml when TEMPORAL_CONFIG_FILE is not set (envconfig's rule). */
export function defaultConfigFile(vars: Record<string, string | undefined>): string | undefined {
  const platform = os.platform();
  let dir: string | undefined;
  if (platform === 'win32') dir = vars.APPDATA;
  else if (platform === 'darwin') dir = vars.HOME && path.join(vars.HOME, 'Library', 'Application Support');
  else if (vars.XDG_CONFIG_HOME) dir = path.isAbsolute(vars.XDG_CONFIG_HOME) ? vars.XDG_CONFIG_HOME : undefined;
  else dir = vars.HOME && path.join(vars.HOME, '.config');
  return dir ? path.join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/** The environment as envconfig should see it: `export TEMPORAL_ADDRESS=` means unset, as it did before envconfig. */
function readVars(processEnv: NodeJS.ProcessEnv): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(processEnv)) {
    if (v === undefined) continue;
    if (v === '' && k.startsWith('TEMPORAL_') && !k.startsWith('TEMPORAL_GRPC_META_')) continue;
    // The CLI's envVarToBool lower-cases first (TLS=TRUE is on); envconfig's TypeScript twin does not.
    vars[k] = BOOL_VARS.includes(k) ? v.toLowerCase() : v;
  }
  return vars;
}

const isTrue = (v: string | undefined) => v === '1' || v === 'true';
const BOOL_VARS = ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION'];

/** The CLI's legacy TLS variables (cliext/client.go): each forces its setting over the profile and the TEMPORAL_TLS_* ones. */
export const LEGACY_TLS_VARS = {
  TEMPORAL_TLS_CERT: ['clientCert', 'path'],
  TEMPORAL_TLS_CERT_DATA: ['clientCert', 'data'],
  TEMPORAL_TLS_KEY: ['clientKey', 'path'],
  TEMPORAL_TLS_KEY_DATA: ['clientKey', 'data'],
  TEMPORAL_TLS_CA: ['serverCACert', 'path'],
  TEMPORAL_TLS_CA_DATA: ['serverCACert', 'data'],
} as const;
type TlsSource = 'clientCert' | 'clientKey' | 'serverCACert';
const TLS_SOURCE_NAME: Record<TlsSource, string> = { clientCert: 'client certificate', clientKey: 'client key', serverCACert: 'server CA certificate' };

const NAMESPACE_TEMPLATE = '${namespace}';
const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/**
 * What the CLI does beyond envconfig (cliext/client.go, Build), applied to the merged profile: the
 * legacy TLS variables, the `${namespace}` address template, and gRPC header names with every
 * underscore a hyphen (the TypeScript envconfig 1.24 replaces only the first: `.replace('_', '-')`).
 */
function applyCliRules(profile: ClientConfigProfile, vars: Record<string, string>): ClientConfigProfile {
  const out: ClientConfigProfile = { ...profile, ...(profile.tls ? { tls: { ...profile.tls } } : {}) };
  for (const [name, [field, kind]] of Object.entries(LEGACY_TLS_VARS)) {
    const value = vars[name];
    if (value === undefined) continue;
    out.tls ??= {};
    const before = out.tls[field];
    if (before && !(kind in before)) {
      // The CLI keeps both and then refuses them ("cannot have ... path with data"): so does the rig, saying which.
      throw new ConnectionSettingsError(
        `${name} gives the ${TLS_SOURCE_NAME[field]} as ${kind === 'path' ? 'a path' : 'data'}, and the profile or a TEMPORAL_TLS_* variable gives it as ${kind === 'path' ? 'data' : 'a path'}: ` +
          'the temporal CLI refuses a path together with data too; keep one of them',
      );
    }
    out.tls[field] = kind === 'path' ? { path: value } : { data: value };
  }
  if (out.address?.includes(NAMESPACE_TEMPLATE)) {
    out.address = out.address.split(NAMESPACE_TEMPLATE).join(out.namespace ?? DEFAULT_TEMPORAL_NAMESPACE);
  }
  // Header names: the profile's (TOML keys, which envconfig leaves as written) and the variables',
  // each normalised whole, the variables applied last (an empty one removes the header).
  const header = (k: string) => k.toLowerCase().replace(/_/g, '-');
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(out.grpcMeta ?? {})) meta[header(k)] = v;
  for (const [k, v] of Object.entries(vars)) {
    if (!k.startsWith(GRPC_META_PREFIX)) continue;
    if (v === '') delete meta[header(k.slice(GRPC_META_PREFIX.length))];
    else meta[header(k.slice(GRPC_META_PREFIX.length))] = v;
  }
  out.grpcMeta = meta;
  return out;
}

/** Connection settings the rig refuses (a missing config file or profile, half an mTLS pair, ...): a set-up error, exit 2. */
export class ConnectionSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionSettingsError';
  }
}

export function loadConnection(processEnv: NodeJS.ProcessEnv = process.env): LoadedConnection {
  const vars = readVars(processEnv);
  const explicitFile = vars.TEMPORAL_CONFIG_FILE;
  const filePath = explicitFile ?? defaultConfigFile(vars);
  const found = filePath !== undefined && fs.existsSync(filePath);
  const configFile = { path: filePath, from: explicitFile ? ('TEMPORAL_CONFIG_FILE' as const) : ('default location' as const), found };
  if (explicitFile && !found) {
    throw new ConnectionSettingsError(`TEMPORAL_CONFIG_FILE=${explicitFile}: no such file (point it at your temporal.toml, or unset it to use ${defaultConfigFile({ ...vars, TEMPORAL_CONFIG_FILE: undefined }) ?? 'no file'})`);
  }
  const profileName = vars.TEMPORAL_PROFILE ?? DEFAULT_PROFILE;
  const where = filePath ?? 'no config file (neither HOME nor XDG_CONFIG_HOME is set)';
  const fileOnly = { overrideEnvVars: vars, disableEnv: true };
  let fileProfile: ClientConfigProfile;
  let rawTls: { disable_host_verification?: boolean } | undefined;
  let rawAuthority: unknown;
  try {
    fileProfile = loadClientConfigProfile(fileOnly);
    const raw = tomlLoadClientConfigProfile(fileOnly);
    rawTls = raw.tls;
    rawAuthority = (raw as Record<string, unknown>).authority;
  } catch (err) {
    const msg = (err as Error).message;
    if (/^Profile '.*' not found/.test(msg)) {
      const names = found ? Object.keys(loadClientConfig({ overrideEnvVars: vars }).profiles) : [];
      throw new ConnectionSettingsError(
        found
          ? `TEMPORAL_PROFILE=${profileName}: ${where} has no [profile.${profileName}] (it has: ${names.join(', ') || 'none'}); set TEMPORAL_PROFILE to one of them, or TEMPORAL_CONFIG_FILE to the file that has this one`
          : `TEMPORAL_PROFILE=${profileName}: there is no config file at ${where}; write the profile there (temporal config set --profile ${profileName} --prop address --value HOST:PORT), set TEMPORAL_CONFIG_FILE to the file that has it, or unset TEMPORAL_PROFILE`,
      );
    }
    throw new ConnectionSettingsError(`${where}: cannot read the connection profile '${profileName}': ${msg}`);
  }
  if (rawTls?.disable_host_verification === true || isTrue(vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION)) {
    const from = isTrue(vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION) ? 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION' : `tls.disable_host_verification in profile '${profileName}' of ${where}`;
    throw new ConnectionSettingsError(
      `${from}: the Temporal TypeScript SDK cannot turn host verification off, and the rig will not pretend it did; ` +
        "remove it, and set TEMPORAL_TLS_SERVER_NAME (or the profile's tls.server_name) to a name the server's certificate holds",
    );
  }
  for (const [what, bad] of [
    ['TEMPORAL_TLS', vars.TEMPORAL_TLS],
    ['TEMPORAL_TLS_DISABLE_HOST_VERIFICATION', vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION],
  ] as const) {
    if (bad !== undefined && !['1', '0', 'true', 'false'].includes(bad)) {
      throw new ConnectionSettingsError(`${what}=${bad}: give true or false (the temporal CLI ignores any other value, the TypeScript SDK would read it as false)`);
    }
  }
  if (vars.TEMPORAL_CLIENT_AUTHORITY !== undefined || typeof rawAuthority === 'string') {
    const from = vars.TEMPORAL_CLIENT_AUTHORITY !== undefined ? 'TEMPORAL_CLIENT_AUTHORITY' : `authority in profile '${profileName}' of ${where}`;
    throw new ConnectionSettingsError(
      `${from}: the rig's workers (the Temporal TypeScript SDK's native connection) cannot set the :authority, and the rig will not connect its client one way and its workers another; ` +
        "remove it; if the endpoint needs a TLS name other than the address's host, set TEMPORAL_TLS_SERVER_NAME (the profile's tls.server_name)",
    );
  }
  const profile = applyCliRules(loadClientConfigProfile({ overrideEnvVars: vars }), vars);
  const tls = profile.tls;
  if (tls && !tls.disabled && tls.clientCert && tls.clientKey && 'path' in tls.clientCert !== 'path' in tls.clientKey) {
    throw new ConnectionSettingsError(
      `the client certificate is given as ${'path' in tls.clientCert ? 'a path' : 'data'} and its key as ${'path' in tls.clientKey ? 'a path' : 'data'}: ` +
        'the temporal CLI refuses that mix ("if either client cert or key data is present, other must be present too"); give both as paths or both as data',
    );
  }
  if (tls && !tls.disabled && Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    throw new ConnectionSettingsError(
      `mTLS needs both a client certificate and its key, and only the ${tls.clientCert ? 'certificate' : 'key'} is set: ` +
        'set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA, or the profile\'s tls.client_cert_path and tls.client_key_path) together, or neither',
    );
  }
  let options: ReturnType<typeof toClientOptions>;
  try {
    options = toClientOptions(profile);
  } catch (err) {
    throw new ConnectionSettingsError(`a TLS file of the connection cannot be read: ${(err as Error).message} (\`rig doctor\` shows which setting names it)`);
  }
  const c = options.connectionOptions;
  const env: TemporalEnv = {
    address: c.address ?? DEFAULT_TEMPORAL_ADDRESS,
    namespace: options.namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
    ...(c.tls !== undefined && c.tls !== null ? { tls: c.tls } : {}),
    ...(c.apiKey ? { apiKey: c.apiKey as string } : {}),
    ...(c.metadata && Object.keys(c.metadata).length > 0 ? { metadata: c.metadata as Record<string, string> } : {}),
  };
  return { env, vars, profileName, configFile, fileProfile, profile };
}

/** The connection the rig's client and workers use (throws, naming the fix, on settings it refuses). */
export function temporalEnv(processEnv: NodeJS.ProcessEnv = process.env): TemporalEnv {
  return loadConnection(processEnv).env;
}

/** Whether the connection is encrypted at all. */
export const usesTls = (env: TemporalEnv): boolean => env.tls !== undefined && env.tls !== false;

/** The options both Connection.connect (client) and NativeConnection.connect (worker) take. */
export function connectionOptions(env: TemporalEnv): { address: string; tls?: TLSConfig | boolean; apiKey?: string; metadata?: Record<string, string> } {
  return { address: env.address, tls: env.tls, apiKey: env.apiKey, metadata: env.metadata };
}

const FIX = 'set TEMPORAL_ADDRESS or a profile, or start a server with `rig dev up`; `rig doctor` shows where each setting comes from';

/**
 * Runs `connect`, failing within `timeoutMs` with a message that names the address and how to change
 * it. Over TLS, a failed connect is looked at once more with Node's own TLS (tls-diagnosis.ts): the
 * SDK's errors ("Failed to connect before the deadline") do not say that a CA or a certificate is wrong.
 */
export async function connectWithin<T>(env: TemporalEnv, connect: () => Promise<T>, timeoutMs = Number(process.env.RIG_TEMPORAL_CONNECT_TIMEOUT_MS ?? 10_000)): Promise<T> {
  const { address } = env;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([connect(), deadline]);
  } catch (err) {
    const msg = (err as Error).message;
    const tlsReason = usesTls(env) ? await diagnoseTls(env).catch(() => undefined) : undefined;
    if (tlsReason) throw new UnreachableError(`cannot reach Temporal at ${address} over TLS: ${tlsReason}`);
    throw new UnreachableError(`cannot reach Temporal at ${address}: ${msg} (${FIX})`);
  } finally {
    clearTimeout(timer);
  }
}
