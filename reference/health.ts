// GET /healthz: which database role the request path really uses, asked of the database (current_user),
// and whether row-level security applies to it: not a superuser, not BYPASSRLS, and row_security_active()
// true on every tenant table (which also fails for the tables' owner, or a member of the owner's role).
// Bring-up refuses a service whose answer is not {db_role: hardcount_app, rls: true}: a service that
// fell back to the admin pool measures a configuration with no RLS on the request path.
import type pg from 'pg';
import type { HealthResponse } from '../lib/protocol/hardcount-api';
import { TENANT_TABLES } from './schema';

const HEALTH_SQL = `SELECT current_user::text AS db_role, r.rolsuper, r.rolbypassrls,
         (SELECT bool_and(row_security_active(format('public.%I', t)))
            FROM unnest($1::text[]) AS t) AS all_rls,
         coalesce(nullif(current_setting('app.livemode', true), '')::boolean, false) AS livemode
    FROM pg_roles r WHERE r.rolname = current_user`;

/**
 * On a request-path connection: inside a key's request transaction, `livemode` is that key's mode (read
 * back from app.livemode, which is what the set_livemode trigger will write); without a key it is the
 * default the trigger would use (false).
 */
export async function health(client: pg.PoolClient | pg.Pool): Promise<HealthResponse> {
  const res = await client.query<{
    db_role: string;
    rolsuper: boolean;
    rolbypassrls: boolean;
    all_rls: boolean | null;
    livemode: boolean;
  }>({ name: 'hc_health', text: HEALTH_SQL, values: [TENANT_TABLES] });
  const r = res.rows[0];
  return {
    ok: true,
    db_role: r.db_role,
    rls: !r.rolsuper && !r.rolbypassrls && r.all_rls === true,
    livemode: r.livemode,
  };
}
