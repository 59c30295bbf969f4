// The spec's `existing` block (issue 14 part 2): a deployment the rig did not make and must not
// unmake. The spec says where the service listens and where the worker finds the database owner's URL
// (an environment variable's NAME, or a file's path): the URL itself, with its password, is read by
// the activities that connect and never enters the spec, the workflow's history or a log. A spec
// that carries a secret inline (a URL with a password, a field named like a key or a password) is
// refused here, naming the field and the fix, before anything runs. Pure (zod only): the workflow
// parses it too.
import { z } from 'zod';

/** Where the worker reads a secret: the NAME of an environment variable, or an absolute file path (mode 0600). */
export const SecretSource = z.union(
  [
    z.strictObject({
      env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'env must be the NAME of an environment variable (e.g. "RIG_EXISTING_DATABASE_URL"), not its value'),
    }),
    z.strictObject({
      file: z.string().regex(/^\//, 'file must be an absolute path to a file holding the URL (mode 0600), not the URL itself'),
    }),
  ],
  { error: 'give { "env": "VARIABLE_NAME" } or { "file": "/absolute/path" }: the worker reads the URL from there' },
);
export type SecretSource = z.infer<typeof SecretSource>;

export const ExistingSpec = z.strictObject({
  /** The running service's base URL, as the load host reaches it. */
  serviceUrl: z.url({ protocol: /^https?$/, error: 'serviceUrl must be an http(s) URL such as "http://10.0.1.12:8080"' }),
  /** The database owner's URL (postgres://owner:password@host:port/db): schema checks, fixtures, seed, reconciliation, pgbench. */
  databaseUrlFrom: SecretSource,
  /**
   * The app role's URL (the role the service runs as), for the denominator's row-level-security leg
   * only; required when the spec has a `denominator`.
   */
  appDatabaseUrlFrom: SecretSource.optional(),
});
export type ExistingSpec = z.infer<typeof ExistingSpec>;

/** Field names that hold a secret, never allowed in a spec: the fix is an `...From` source. */
const SECRET_FIELD = /(password|passwd|secret|token|api[_-]?key|^databaseUrl$|^appDatabaseUrl$|^ownerUrl$|^appUrl$|^superuserUrl$)/i;
/** scheme://user:password@ : a URL that carries its password. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]*@/i;

/** The spec's fields that name where a secret is (an environment variable or a 0600 file). */
const SOURCE_FIELDS = ['databaseUrl', 'appDatabaseUrl'];

/** A field about Temporal (temporalApiKey, temporal.apiKey): its secret is the connection's, not the service's. */
const TEMPORAL_FIELD = /temporal/i;

/**
 * What to do instead of writing the secret a field would hold: name it through a field that exists
 * (existing.databaseUrlFrom, existing.appDatabaseUrlFrom), or nothing at all where the rig makes the
 * secret itself (the campaign's API key, the database passwords of a rig it provisions). A Temporal
 * credential is neither: the rig reaches Temporal as the temporal CLI does (lib/temporal/connection-env.ts),
 * so the fix is where the CLI reads it, never the spec (a workflow's own argument).
 */
function insteadOf(field: string, path: Array<string | number> = []): string {
  if ([field, ...path].some((k) => typeof k === 'string' && TEMPORAL_FIELD.test(k))) {
    return (
      'the rig reaches Temporal with the temporal CLI\'s own settings, never the spec: export TEMPORAL_API_KEY ' +
      '(in the shell that runs rig, and in each rig worker\'s), or put api_key in a profile of temporal.toml ' +
      '(TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE); `rig doctor` shows which key is used and where it came from'
    );
  }
  if (SOURCE_FIELDS.includes(field)) {
    return `put it in an environment variable of the worker and name it with "${field}From": { "env": "NAME" }, or in a 0600 file named with "${field}From": { "file": "/path" }`;
  }
  if (/url/i.test(field)) {
    return 'remove "user:password@" from this URL: the rig calls the service with the API key bring-up makes, and a database URL with its password is named with existing.databaseUrlFrom ({ "env": "NAME" } or { "file": "/path" })';
  }
  if (/api[_-]?key|token/i.test(field)) {
    return 'none is needed: bring-up makes the campaign\'s own API key in the database and keeps it in the rig\'s 0600 secrets file, out of history';
  }
  return (
    'none is needed for a rig the rig makes (local and aws make their own passwords and keep them out of history); ' +
    'for a deployment of yours (target "existing"), put the password in the database URL and name that URL with ' +
    'existing.databaseUrlFrom (and existing.appDatabaseUrlFrom): { "env": "NAME" } or { "file": "/path" }'
  );
}

/**
 * Every place in a spec input that carries a secret inline, with the fix. Walks the whole input (any
 * target): a URL with a password is a secret wherever it sits. Field names ending in `From` are
 * sources (a variable's name or a path), checked by their own schema.
 */
export function inlineSecretProblems(input: unknown): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  const fix = (field: string, at: Array<string | number> = []) => `a secret is never written in the spec (it would be kept in spec.json and the workflow's history): ${insteadOf(field, at)}`;
  const walk = (v: unknown, path: Array<string | number>) => {
    if (typeof v === 'string') {
      if (URL_WITH_PASSWORD.test(v)) {
        // The field the fix names: the nearest one above a source's "env"/"file" (databaseUrlFrom.env -> databaseUrl).
        const field = [...path].reverse().find((k): k is string => typeof k === 'string' && k !== 'env' && k !== 'file') ?? 'url';
        out.push({ path, message: `holds a URL with an inline password: ${fix(field.replace(/From$/, ''))}` });
      }
      return;
    }
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, [...path, i]));
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        // A service's `env` map (service.env, a variant's service.env) has its own check with its own fix
        // (lib/protocol/service-spec.ts: export the secret in the worker's environment instead).
        if (k === 'env' && x && typeof x === 'object' && !Array.isArray(x)) continue;
        if (SECRET_FIELD.test(k) && !k.endsWith('From') && x !== undefined) {
          out.push({ path: [...path, k], message: `"${k}" would carry a secret inline: ${fix(k, path)}` });
          continue;
        }
        walk(x, [...path, k]);
      }
    }
  };
  walk(input, []);
  return out;
}

/** What an `existing` campaign cannot be, or null each: read with the rest of the spec (spec.ts). */
export function existingProblems(s: {
  target: string;
  existing?: ExistingSpec;
  seed: { historyRows: number; intoExisting?: boolean; allowForeignRows?: boolean };
  denominator?: unknown;
}): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  if (s.target !== 'existing') {
    if (s.existing) out.push({ path: ['existing'], message: 'an "existing" block is only read with target "existing": remove it, or set target to "existing"' });
    return out;
  }
  if (!s.existing) {
    out.push({ path: ['existing'], message: 'target "existing" needs an "existing" block (serviceUrl, databaseUrlFrom): see examples/existing.json' });
    return out;
  }
  if (s.seed.historyRows > 0 && s.seed.intoExisting !== true) {
    out.push({
      path: ['seed', 'intoExisting'],
      message: `seeding ${s.seed.historyRows} history rows writes into a database the rig did not make: set seed.intoExisting to true to mean it, or seed.historyRows to 0`,
    });
  }
  if (s.denominator !== undefined && !s.existing.appDatabaseUrlFrom) {
    out.push({
      path: ['existing', 'appDatabaseUrlFrom'],
      message: "the denominator's row-level-security leg connects as the service's app role: give existing.appDatabaseUrlFrom ({ \"env\": \"NAME\" } or { \"file\": \"/path\" }), or remove \"denominator\"",
    });
  }
  return out;
}

/**
 * Why the steps that make, guard or remove a rig do not run on target "existing": one wording for the
 * workflow's skipped steps, the campaign log and the page.
 */
export const EXISTING_SKIPPED = {
  'clean-check':
    'skipped on target "existing": the deployment is not the rig\'s, so other traffic and resources there are expected; its rows never count (every repeat is reconciled by its run tag)',
  watchdog: 'skipped on target "existing": there is nothing of the rig\'s to tear down, and a watchdog would only tear down what the rig made',
  teardown: 'nothing torn down: target "existing" is a deployment the rig did not make; its service and database are left running as they were',
} as const;

/** The page's line for a campaign on an existing deployment. */
export const EXISTING_PAGE_NOTE =
  'Existing deployment (target "existing"): the rig provisioned nothing and tore nothing down; the service and the database were left running as found. ' +
  'The clean-check and the watchdog were skipped. Bring-up\'s checks all ran, and every repeat counts only the rows of its own run tag, so other traffic on the deployment never counts';
