// The request path: one pooled connection, one transaction per request, the tenant and mode set with
// set_config(..., true) (transaction-local, like SET LOCAL) from the API key. Row-level security reads
// exactly those settings, so nothing on the request path can see another tenant or the other mode,
// and a pooled connection carries nothing over to the next request.
import type pg from 'pg';
import type { LastUsedMode } from './config';
import { HttpError } from './http-util';

export interface KeyContext {
  tenantId: string;
  livemode: boolean;
  keyId: string;
}

const HASH_RE = /^[0-9a-f]{64}$/;
const LAST_USED_INTERVAL_MS = 60_000;

export class RequestPath {
  /** key id -> when this process last wrote its last_used_at (per-minute mode). */
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly lastUsed: LastUsedMode,
  ) {}

  /** Run `fn` in a request transaction for the key whose sha256 is `keyHash`; 401 when there is none. */
  async run<T>(keyHash: string, fn: (client: pg.PoolClient, key: KeyContext) => Promise<T>): Promise<T> {
    // The hash is ours (hex sha256), so it can be inlined: BEGIN, the key lookup and both settings then
    // cost one round trip instead of three.
    if (!HASH_RE.test(keyHash)) throw new Error('keyHash must be a lowercase hex sha256');
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const results = (await client.query(
        `BEGIN; SELECT a.tenant_id::text AS tenant_id, a.livemode, a.key_id::text AS key_id,
                (a.last_used_at IS NULL OR a.last_used_at < now() - interval '1 minute') AS stale,
                set_config('app.tenant_id', a.tenant_id::text, true) AS t,
                set_config('app.livemode', a.livemode::text, true) AS l
           FROM auth_api_key('${keyHash}') a`,
      )) as unknown as pg.QueryResult[];
      const row = results[1].rows[0] as
        | { tenant_id: string; livemode: boolean; key_id: string; stale: boolean }
        | undefined;
      if (!row) throw new HttpError(401, 'unknown API key', 'authorization');
      const key: KeyContext = { tenantId: row.tenant_id, livemode: row.livemode, keyId: row.key_id };
      await this.touch(client, key.keyId, row.stale);
      const out = await fn(client, key);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error; // the connection is unusable: destroy it instead of pooling it
      }
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /**
   * api_keys.last_used_at. every-request: an UPDATE of the key's one row in every request, its lock held
   * to commit, so one busy key serializes every request (the #818 wall, ~1 RTT per request). per-minute
   * (the fix): only when the stored value is over a minute old, at most once a minute from this process,
   * and guarded in SQL so that concurrent writers after the first find nothing to do.
   */
  private async touch(client: pg.PoolClient, keyId: string, stale: boolean): Promise<void> {
    if (this.lastUsed === 'every-request') {
      await client.query({
        name: 'hc_touch_key',
        text: 'UPDATE api_keys SET last_used_at = now() WHERE id = $1',
        values: [keyId],
      });
      return;
    }
    if (!stale) return;
    const now = Date.now();
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
    this.lastWritten.set(keyId, now);
    await client.query({
      name: 'hc_touch_key_per_minute',
      text: `UPDATE api_keys SET last_used_at = now()
              WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      values: [keyId],
    });
  }
}
