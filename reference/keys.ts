// API keys: random, shown once, stored only as their sha256 (api_keys.key_hash). A leaked table does
// not leak usable keys, and the lookup by hash is exact.
import crypto from 'node:crypto';

/** A new key, e.g. `hc_live_<43 chars>`; the prefix tells a human which mode it writes to. */
export function newApiKey(livemode: boolean): string {
  return `hc_${livemode ? 'live' : 'test'}_${crypto.randomBytes(32).toString('base64url')}`;
}

/** Lowercase hex sha256: what api_keys.key_hash holds. */
export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The key from `Authorization: Bearer <key>`, or undefined. */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : undefined;
}
