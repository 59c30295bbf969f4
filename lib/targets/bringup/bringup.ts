// Bring-up, written once for both rigs: after provisioning (roles, migrations and a running service),
// make the fixtures and verify that what will be measured is what the spec measures. Order: cheap and
// non-writing checks first (availability zone, schema, app privileges), then the fixtures, then the
// checks that need them (the service's role and RLS, and a probe write). The first failing check
// refuses with BringupRefusal; nothing later runs.
//
// The API key is returned as a Secret and never logged; the caller stores it with writeSecretFile.
import pg from 'pg';
import { pgConfig } from '../../pg/connection';
import {
  checkAppPrivileges,
  checkAvailabilityZone,
  checkProbeWrite,
  checkSchema,
  checkServiceRole,
  DEFAULT_APP_ROLE,
  referenceSchema,
  type ExpectedSchema,
} from './checks';
import { createFixtures, type FixtureOptions, type Fixtures } from './fixtures';
import type { BringupCheck } from './refusal';

export interface VerifyInput {
  /** Owner (or RDS master) URL of the database the service uses; reads as a role RLS does not bind. */
  ownerUrl: string;
  /** Base URL of the running service, e.g. http://10.0.1.12:8080. */
  serviceUrl: string;
  /** Default hardcount_app. */
  appRole?: string;
  /** Default: the reference service's schema (reference/migrations). */
  expected?: ExpectedSchema;
  /** AWS only: the two zones to compare. Absent on the local rig (the check is skipped). */
  availabilityZones?: { app: string; database: string };
  /** Tags the probe event (properties.rig_run) and its idempotency key; unique per bring-up. */
  runTag?: string;
  /** Progress lines (never carry the key or a URL with a password). */
  log?: (line: string) => void;
  timeoutMs?: number;
}

export interface BringupInput extends VerifyInput {
  fixtures?: FixtureOptions;
}

export interface CheckResult {
  check: BringupCheck;
  detail: string;
}

export interface BringupResult {
  fixtures: Fixtures;
  checks: CheckResult[];
  /** The probe's run tag; its one row stays in usage_events (reconciliation counts by run tag). */
  runTag: string;
}

/** Make the fixtures and verify; throws BringupRefusal at the first failing check. */
export async function bringUp(input: BringupInput): Promise<BringupResult> {
  const ctx = context(input);
  const owner = new pg.Client(pgConfig(input.ownerUrl, { application_name: 'rig-bringup' }));
  await owner.connect();
  try {
    const checks = await preFixtureChecks(owner, ctx);
    const fixtures = await createFixtures(input.ownerUrl, input.fixtures);
    ctx.log(`bring-up: fixtures: tenant ${fixtures.tenantId}, ${fixtures.customers.length} customers, ` +
      `meter ${fixtures.meter}, livemode=${fixtures.livemode}, API key id ${fixtures.apiKeyId}`);
    checks.push({ check: 'fixtures', detail: `${fixtures.customers.length} customers in livemode=${fixtures.livemode}` });
    checks.push(...(await serviceChecks(owner, ctx, fixtures)));
    return { fixtures, checks, runTag: ctx.runTag };
  } finally {
    await owner.end();
  }
}

/** Verify a rig whose fixtures exist already (e.g. re-checking before a series). */
export async function verifyBringup(
  input: VerifyInput & { fixtures: Pick<Fixtures, 'apiKey' | 'tenantId' | 'livemode' | 'customers' | 'meter'> },
): Promise<CheckResult[]> {
  const ctx = context(input);
  const owner = new pg.Client(pgConfig(input.ownerUrl, { application_name: 'rig-bringup' }));
  await owner.connect();
  try {
    const checks = await preFixtureChecks(owner, ctx);
    checks.push(...(await serviceChecks(owner, ctx, input.fixtures)));
    return checks;
  } finally {
    await owner.end();
  }
}

interface Ctx extends VerifyInput {
  appRole: string;
  expected: ExpectedSchema;
  runTag: string;
  log: (line: string) => void;
}

function context(input: VerifyInput): Ctx {
  return {
    ...input,
    appRole: input.appRole ?? DEFAULT_APP_ROLE,
    expected: input.expected ?? referenceSchema(),
    runTag: input.runTag ?? `bringup-${new Date().toISOString().replace(/[:.]/g, '-')}`,
    log: input.log ?? (() => undefined),
  };
}

async function preFixtureChecks(owner: pg.Client, ctx: Ctx): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const passed = (check: BringupCheck, detail: string) => {
    out.push({ check, detail });
    ctx.log(`bring-up: ${check}: ok, ${detail}`);
  };
  if (ctx.availabilityZones) passed('availability-zone', checkAvailabilityZone(ctx.availabilityZones));
  passed('schema', await checkSchema(owner, ctx.expected));
  passed('app-privileges', await checkAppPrivileges(owner, ctx.appRole, ctx.expected));
  return out;
}

async function serviceChecks(
  owner: pg.Client,
  ctx: Ctx,
  f: Pick<Fixtures, 'apiKey' | 'tenantId' | 'livemode' | 'customers' | 'meter'>,
): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const passed = (check: BringupCheck, detail: string) => {
    out.push({ check, detail });
    ctx.log(`bring-up: ${check}: ok, ${detail}`);
  };
  passed(
    'service-role',
    await checkServiceRole(owner, {
      serviceUrl: ctx.serviceUrl,
      apiKey: f.apiKey,
      appRole: ctx.appRole,
      livemode: f.livemode,
      expected: ctx.expected,
      timeoutMs: ctx.timeoutMs,
    }),
  );
  passed(
    'probe-write',
    await checkProbeWrite(owner, {
      serviceUrl: ctx.serviceUrl,
      apiKey: f.apiKey,
      tenantId: f.tenantId,
      livemode: f.livemode,
      customer: f.customers[0],
      meter: f.meter,
      runTag: ctx.runTag,
      timeoutMs: ctx.timeoutMs,
    }),
  );
  return out;
}
