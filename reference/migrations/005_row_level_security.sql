-- Row-level security on every tenant table. It binds hardcount_app (not a superuser, not BYPASSRLS,
-- not the owner); the owner and superusers bypass it, which is why a service that fell back to the
-- admin pool measures a configuration nobody self-hosts (bring-up refuses it).
-- Each request sets app.tenant_id and app.livemode with SET LOCAL in its own transaction. When they
-- are unset, current_setting() raises (or yields '' which fails the cast): the request fails closed
-- instead of seeing every tenant.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
  USING (id = current_setting('app.tenant_id')::bigint);

ALTER TABLE customers ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON customers
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);

ALTER TABLE meters ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON meters
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);

-- Rates have no livemode column: one price list per tenant.
ALTER TABLE provider_cost_rates ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON provider_cost_rates
  USING (tenant_id = current_setting('app.tenant_id')::bigint);

ALTER TABLE usage_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_events
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);

ALTER TABLE invoices ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON invoices
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);

ALTER TABLE usage_daily_rollup ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_daily_rollup
  USING (tenant_id = current_setting('app.tenant_id')::bigint and livemode = current_setting('app.livemode')::boolean);
