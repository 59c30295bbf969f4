// Names the reference schema is made of, in one place: the migrations create them, the service's
// health answer checks them, and bring-up compares a live database against them.

/** The role that owns every object and runs the migrations. */
export const OWNER_ROLE = 'hardcount_owner';
/** The role the service's request path logs in as; row-level security binds it. */
export const APP_ROLE = 'hardcount_app';
/** The database roles.ts creates, owned by OWNER_ROLE. */
export const DATABASE = 'hardcount';

/** Tables that carry tenant rows; each has row-level security enabled with a tenant_isolation policy. */
export const TENANT_TABLES = [
  'tenants',
  'customers',
  'meters',
  'api_keys',
  'provider_cost_rates',
  'usage_events',
  'invoices',
  'usage_daily_rollup',
] as const;

/** Every table in the public schema after a clean migration: the tenant tables plus the migration ledger. */
export const REFERENCE_TABLES: readonly string[] = [...TENANT_TABLES, 'schema_migrations'];

/** Tables whose livemode the set_livemode trigger overwrites from app.livemode. */
export const LIVEMODE_TRIGGER_TABLES = ['usage_events', 'customers', 'meters', 'api_keys'] as const;
