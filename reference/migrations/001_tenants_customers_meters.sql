-- The parent rows every event points at. Run as hardcount_owner: every object below is owned by it,
-- and hardcount_app's grants come from the ALTER DEFAULT PRIVILEGES made before this file ran
-- (reference/roles.ts), not from GRANT statements here. That is the spec's trap: a cluster that
-- migrates cleanly but whose app role cannot read what the migration made.

CREATE TABLE tenants (
  id         bigserial PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE customers (
  id          bigserial PRIMARY KEY,
  tenant_id   bigint NOT NULL REFERENCES tenants (id),
  external_id text NOT NULL,
  name        text NOT NULL,
  livemode    boolean NOT NULL DEFAULT false,
  created_at  timestamptz DEFAULT now(),
  CONSTRAINT customers_tenant_livemode_external_id UNIQUE (tenant_id, livemode, external_id)
);

CREATE TABLE meters (
  id        bigserial PRIMARY KEY,
  tenant_id bigint NOT NULL REFERENCES tenants (id),
  key       text NOT NULL,
  name      text,
  livemode  boolean NOT NULL DEFAULT false,
  CONSTRAINT meters_tenant_livemode_key UNIQUE (tenant_id, livemode, key)
);

CREATE TABLE api_keys (
  id           bigserial PRIMARY KEY,
  tenant_id    bigint NOT NULL REFERENCES tenants (id),
  key_hash     text NOT NULL UNIQUE,
  livemode     boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- #818: writing this on every request made one busy key one contended row (~570 req/s wall).
  -- The service writes it at most once a minute per key unless HC_LAST_USED=every-request.
  last_used_at timestamptz
);

CREATE TABLE provider_cost_rates (
  id         bigserial PRIMARY KEY,
  tenant_id  bigint NOT NULL REFERENCES tenants (id),
  meter_id   bigint NOT NULL REFERENCES meters (id),
  unit_cost  numeric(20, 10) NOT NULL,
  valid_from timestamptz NOT NULL
);
CREATE INDEX provider_cost_rates_meter_valid_from ON provider_cost_rates (meter_id, valid_from DESC);
