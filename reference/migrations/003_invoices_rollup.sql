CREATE TABLE invoices (
  id           bigserial PRIMARY KEY,
  tenant_id    bigint NOT NULL REFERENCES tenants (id),
  customer_id  bigint NOT NULL REFERENCES customers (id),
  livemode     boolean NOT NULL DEFAULT false,
  period_start timestamptz,
  period_end   timestamptz,
  total        numeric(20, 10),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX invoices_tenant_created ON invoices (tenant_id, livemode, created_at DESC);

-- #819's fix, behind HC_AGGREGATE=rollup: one row per customer, meter and UTC day, maintained by the
-- ingest path in the same transaction as the events it counts.
CREATE TABLE usage_daily_rollup (
  tenant_id    bigint NOT NULL REFERENCES tenants (id),
  customer_id  bigint NOT NULL REFERENCES customers (id),
  meter_id     bigint NOT NULL REFERENCES meters (id),
  livemode     boolean NOT NULL,
  day          date NOT NULL,
  event_count  bigint NOT NULL DEFAULT 0,
  quantity_sum bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, livemode, customer_id, meter_id, day)
);
