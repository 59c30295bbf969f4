// Where each connection setting came from, for `rig doctor`: a TEMPORAL_* variable, the profile of a
// temporal.toml (its path and name), or the rig's default. Secrets are never printed: an API key,
// a client key and gRPC header values are shown as set or not, with their length at most;
// certificates, which are public, by their subject and expiry.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type { ClientConfigProfile, ConfigDataSource } from '@temporalio/envconfig';
import { DEFAULT_TEMPORAL_ADDRESS, DEFAULT_TEMPORAL_NAMESPACE, type LoadedConnection } from './connection-env';

export interface SettingLine {
  setting: string;
  value: string;
  from: string;
}

const MASK = '****';

type TlsKey = 'clientCert' | 'clientKey' | 'serverCACert';
/** The variables of each TLS file, the legacy ones first (they win: connection-env.ts's applyCliRules). */
const TLS_VARS: Record<TlsKey, string[]> = {
  clientCert: ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_CERT_DATA', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
  clientKey: ['TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_KEY_DATA', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
  serverCACert: ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CA_DATA', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
};
const TLS_FIELD: Record<TlsKey, string> = { clientCert: 'client_cert', clientKey: 'client_key', serverCACert: 'server_ca_cert' };

export function describeConnection(c: LoadedConnection): SettingLine[] {
  const inProfile = `profile '${c.profileName}' in ${c.configFile.path}`;
  /** The variable if it is set, else the profile if it has the field, else the default. */
  const origin = (vars: string[], inFile: boolean, dflt = 'default'): string => {
    const v = vars.find((name) => c.vars[name] !== undefined);
    if (v) return `env ${v}`;
    return inFile ? inProfile : dflt;
  };
  const f: ClientConfigProfile = c.fileProfile;
  const p = c.profile;
  const lines: SettingLine[] = [];
  const add = (setting: string, value: string, from: string) => lines.push({ setting, value, from });

  add('config file', `${c.configFile.path ?? '(none)'}${c.configFile.found ? '' : ' (not found: no profile is read)'}`, c.configFile.from === 'TEMPORAL_CONFIG_FILE' ? 'env TEMPORAL_CONFIG_FILE' : 'default location');
  add('profile', `${c.profileName}${c.configFile.found && Object.keys(f).length === 0 ? ' (not in the file)' : ''}`, c.vars.TEMPORAL_PROFILE ? 'env TEMPORAL_PROFILE' : 'default');
  add('address', c.env.address, origin(['TEMPORAL_ADDRESS'], f.address !== undefined, `default (${DEFAULT_TEMPORAL_ADDRESS}, \`rig dev up\`'s server)`));
  add('namespace', c.env.namespace, origin(['TEMPORAL_NAMESPACE'], f.namespace !== undefined, `default (${DEFAULT_TEMPORAL_NAMESPACE})`));

  const tls = p.tls;
  const tlsVars = ['TEMPORAL_TLS', ...Object.values(TLS_VARS).flat(), 'TEMPORAL_TLS_SERVER_NAME'];
  if (c.env.tls === false) {
    add('TLS', 'off (disabled)', origin(['TEMPORAL_TLS'], f.tls?.disabled !== undefined));
  } else if (c.env.tls === undefined) {
    add('TLS', 'off (no TLS setting and no API key)', 'default');
  } else if (c.env.tls === true) {
    add('TLS', "on, the system's trust store (an API key implies TLS)", origin(['TEMPORAL_API_KEY'], f.apiKey !== undefined));
  } else {
    add('TLS', tls?.clientCert ? 'on, mTLS (a client certificate is sent)' : 'on', origin(tlsVars, f.tls !== undefined));
  }
  if (typeof c.env.tls === 'object' || c.env.tls === true) {
    const source = (key: TlsKey): SettingLine => {
      const s: ConfigDataSource | undefined = tls?.[key];
      const from = origin(TLS_VARS[key], f.tls?.[key] !== undefined);
      const setting = key === 'serverCACert' ? 'server CA' : key === 'clientCert' ? 'client cert' : 'client key';
      if (!s) return { setting, value: key === 'serverCACert' ? "the system's trust store" : 'none', from: key === 'serverCACert' ? 'default' : from };
      const where = 'path' in s ? `file ${s.path}` : `inline data (${TLS_FIELD[key]}_data)`;
      if (key === 'clientKey') return { setting, value: `${where}${'path' in s ? '' : ` ${MASK}`}`, from };
      return { setting, value: `${where}${certSummary(s)}`, from };
    };
    lines.push(source('serverCACert'), source('clientCert'), source('clientKey'));
    add('server name', tls?.serverName ?? "the address's host", origin(['TEMPORAL_TLS_SERVER_NAME'], f.tls?.serverName !== undefined));
    add('host verification', 'on (the TypeScript SDK always verifies the server\'s name)', 'SDK');
  }
  add('API key', c.env.apiKey ? `set (${MASK}, ${c.env.apiKey.length} characters)` : 'none', c.env.apiKey ? origin(['TEMPORAL_API_KEY'], f.apiKey !== undefined) : 'default');
  for (const [header, value] of Object.entries(c.env.metadata ?? {})) {
    const v = Object.keys(c.vars).find((k) => k.startsWith('TEMPORAL_GRPC_META_') && k.slice('TEMPORAL_GRPC_META_'.length).toLowerCase().replace(/_/g, '-') === header);
    add(`gRPC header ${header}`, `set (${MASK}, ${value.length} characters)`, v ? `env ${v}` : inProfile);
  }
  const timeout = process.env.RIG_TEMPORAL_CONNECT_TIMEOUT_MS;
  add('connect timeout', `${Number(timeout ?? 10_000) / 1000} s`, timeout ? 'env RIG_TEMPORAL_CONNECT_TIMEOUT_MS' : 'default');
  return lines;
}

/** A certificate's subject and expiry; what cannot be parsed is said to be so (the connect will say why). */
function certSummary(s: ConfigDataSource): string {
  try {
    const pem = 'path' in s ? fs.readFileSync(s.path) : Buffer.from(s.data);
    const x = new X509Certificate(pem);
    return `: ${x.subject.replace(/\n/g, ', ')}, valid to ${new Date(x.validTo).toISOString().slice(0, 10)}`;
  } catch (err) {
    return ` (not a readable certificate: ${(err as Error).message})`;
  }
}

export function formatSettings(lines: SettingLine[]): string[] {
  const w = Math.max(...lines.map((l) => l.setting.length));
  const v = Math.min(60, Math.max(...lines.map((l) => l.value.length)));
  return lines.map((l) => `  ${l.setting.padEnd(w)}  ${l.value.padEnd(v)}  from ${l.from}`);
}
