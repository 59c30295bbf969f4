// The wire contract between the load generator and any Hardcount-compatible service (the reference
// service in reference/, or the real one on AWS). Both sides import it, so the shape is defined once.
//
// Every event the generator sends carries `properties[RUN_TAG_PROPERTY] = <run tag>`: the database side
// counts exactly one repeat's rows and quantity by that tag (reconciliation), never by time window.

export const INGEST_PATH = '/v1/usage-events';
export const AGGREGATE_PATH = '/v1/usage-events/aggregate';
export const INVOICES_PATH = '/v1/invoices';
export const CUSTOMERS_PATH = '/v1/customers';
export const HEALTH_PATH = '/healthz';

/** The property every generated event carries, whose value is the repeat's run tag. */
export const RUN_TAG_PROPERTY = 'rig_run';

/** Limits the service enforces and the generator respects. */
export const MAX_BATCH = 1000;
export const MAX_BODY_BYTES = 1024 * 1024;

export interface UsageEventIn {
  /** External id of a customer of the key's tenant (e.g. "cus_0001"). */
  customer_id: string;
  /** Meter key of the key's tenant (e.g. "api_calls"). */
  meter: string;
  /** A non-negative integer. */
  quantity: number;
  /** Unique per tenant; a replay returns the first result and writes nothing. */
  idempotency_key: string;
  /**
   * When the event happened, as its client says (issue 35): RFC 3339 with a zone, e.g.
   * "2026-12-05T16:30:00.123Z"; stored as the event's time, late or out of order alike. Absent: the
   * time the service takes it.
   */
  timestamp?: string;
  properties?: Record<string, unknown>;
}

/** POST /v1/usage-events, `Authorization: Bearer <api key>`. */
export interface IngestRequest {
  events: UsageEventIn[];
}

/** 201 answer: `created` rows were written, `duplicates` were replays of earlier keys. */
export interface IngestResponse {
  accepted: number;
  created: number;
  duplicates: number;
}

/** GET /v1/usage-events/aggregate?customer_id=&from=&to= (from/to ISO-8601, optional). */
export interface AggregateResponse {
  customer_id: string;
  meters: Array<{ meter: string; count: number; sum: number }>;
}

/** 4xx/5xx JSON body: `field` names the offending input where there is one. */
export interface ErrorResponse {
  error: string;
  field?: string;
}

/** GET /healthz: which role the request path uses and whether row-level security applies to it. */
export interface HealthResponse {
  ok: boolean;
  db_role: string;
  rls: boolean;
  livemode: boolean;
  /**
   * The settings the service runs with, so that a rig can read back what took effect (the reference
   * service: its switches lastUsed, insert, aggregate). Optional for any other service; string values.
   */
  settings?: Record<string, string | undefined>;
  /** The build the service says it is (a commit, an image tag), when it says: `rig history` names runs by it. */
  build?: string;
}
