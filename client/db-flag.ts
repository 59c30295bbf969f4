// `--db URL`: the owner role's connection URL, for commands that count rows themselves (`rig measure`
// reconciles its run tag). The password may be in the URL or in PGPASSWORD (node-postgres reads it);
// either way it is never printed: every message names the URL with the password masked, and any
// text that reaches the terminal has the password scrubbed from it.
import { UsageError } from './parse-flags';

export interface DbFlag {
  /** The URL as given (with its password): only for the library call that connects. */
  url: string;
  /** The URL with the password masked: for messages. */
  shown: string;
  /** Remove the password from any text (a driver message, a stack) before it is printed. */
  scrub(text: string): string;
}

export function dbFlag(value: string | undefined, flag = '--db'): DbFlag | undefined {
  if (value === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be a PostgreSQL URL, e.g. ${flag} postgres://hardcount_owner@127.0.0.1:5432/hardcount (the password in PGPASSWORD), got something that is not a URL`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new UsageError(`${flag} must be a postgres:// URL (the owner role's), got a ${u.protocol.replace(/:$/, '')}: URL`);
  }
  const password = u.password ? decodeURIComponent(u.password) : '';
  const masked = new URL(value);
  if (masked.password) masked.password = '***';
  const secrets = [password, u.password].filter((s) => s.length > 0);
  return {
    url: value,
    shown: masked.toString(),
    scrub: (text: string) => secrets.reduce((t, s) => t.split(s).join('***'), text),
  };
}
