// Pre-flight: before any load, one look at the target, so that a wrong URL or a refused key is a
// clear error naming the field and the fix, not a run of 100 % failures.
//   1. GET /healthz answers (any 2xx): the URL is a Hardcount-compatible API that is up;
//   2. GET /v1/customers with the key answers 2xx: the key is accepted (401/403 name RIG_API_KEY);
//      its body also gives the customer list when none was given.
// Nothing is written to the target.
import { request } from 'undici';
import { CUSTOMERS_PATH, HEALTH_PATH } from '../protocol/hardcount-api';
import { customersFromListResponse } from './customers';

export class PreflightError extends Error {
  constructor(
    readonly field: string,
    message: string,
    /** Nothing answered at the URL (exit 69), rather than an answer that refused (exit 2). */
    readonly unreachable = false,
  ) {
    super(message);
    this.name = 'PreflightError';
  }
}

export interface PreflightResult {
  health: unknown;
  /** External ids from GET /v1/customers (possibly empty). */
  customers: string[];
}

const TIMEOUT_MS = 5000;

export async function preflight(url: string, apiKey: string): Promise<PreflightResult> {
  if (!apiKey) throw new PreflightError('RIG_API_KEY', 'RIG_API_KEY is not set: export RIG_API_KEY=<an API key of the target tenant> before running');
  const base = url.replace(/\/+$/, '');
  const get = async (path: string, auth: boolean) => {
    try {
      const res = await request(base + path, {
        method: 'GET',
        headers: auth ? { authorization: `Bearer ${apiKey}` } : {},
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const text = await res.body.text();
      return { status: res.statusCode, text };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      const code = e.code ?? e.cause?.code ?? e.name;
      throw new PreflightError('url', `--url ${url} does not answer (GET ${path}: ${code}${e.message ? `, ${e.message}` : ''}): start the service, or fix --url`, true);
    }
  };
  const h = await get(HEALTH_PATH, false);
  if (h.status < 200 || h.status >= 300) {
    throw new PreflightError('url', `--url ${url}: GET ${HEALTH_PATH} answered ${h.status}, not 2xx: is --url the root of a Hardcount-compatible API (and is it healthy)?`);
  }
  const c = await get(CUSTOMERS_PATH, true);
  if (c.status === 401 || c.status === 403) {
    throw new PreflightError('RIG_API_KEY', `RIG_API_KEY was refused (GET ${CUSTOMERS_PATH} answered ${c.status}): set RIG_API_KEY to a valid API key of the target tenant`);
  }
  if (c.status < 200 || c.status >= 300) {
    throw new PreflightError('url', `--url ${url}: GET ${CUSTOMERS_PATH} answered ${c.status}: ${c.text.slice(0, 200)}`);
  }
  let health: unknown = null;
  try {
    health = JSON.parse(h.text);
  } catch {
    health = h.text.slice(0, 200);
  }
  let customers: string[] = [];
  try {
    customers = customersFromListResponse(JSON.parse(c.text));
  } catch {
    customers = [];
  }
  return { health, customers };
}
