// The service under test as data (issue 14): which build runs (`run`: absent = the reference service
// the rig carries; a command line on the local target; a container image on an AWS app node) and its
// settings (`env`, each entry one environment variable of the service). The reference service's three
// switches (lastUsed, insert, aggregate) stay as shorthands for its HC_LAST_USED, HC_INSERT and
// HC_AGGREGATE: existing specs and variants keep working, and the page keeps their words.
//
// The environment the rig itself sets (the listen address, the app role's URL, its process markers)
// is the contract of docs/your-service.md, "The service contract"; a spec may not set those names.
// Secrets never enter a spec (it is workflow history): names that read like one are refused.
// Pure: the workflow, the targets and the page all ask here what a service is started with.
import { z } from 'zod';

/** An environment variable's name, as POSIX shells accept it. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Set by the rig for every service (docs/your-service.md, "The service contract"): never from a spec. */
export const RIG_OWNED_ENV = ['DATABASE_URL', 'HC_DATABASE_URL', 'HOST', 'PORT', 'HC_HOST', 'HC_PORT'] as const;

/** The reference service's switches and the variables they stand for. */
export const REFERENCE_SWITCHES = { lastUsed: 'HC_LAST_USED', insert: 'HC_INSERT', aggregate: 'HC_AGGREGATE' } as const;
type Switch = keyof typeof REFERENCE_SWITCHES;
const SWITCH_DEFAULTS: Record<Switch, string> = { lastUsed: 'per-minute', insert: 'per-event', aggregate: 'scan' };

/** A name that reads like a secret: a word of it is PASSWORD, SECRET, TOKEN, KEY, ... */
const SECRET_WORD = /(^|_)(PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY|APIKEY|CREDENTIALS?|PRIVATE)(_|$)/i;
/** A value carrying a password in a URL (scheme://user:password@host). */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]+:[^/@\s]+@/i;

/** Where the service comes from; absent: the reference service (reference/main.ts). */
export const ServiceRunSpec = z
  .strictObject({
    /** Local target: argv of the service, no shell. argv[0] is an absolute path or a name looked up on PATH. */
    command: z.array(z.string().min(1, 'an argument of service.run.command is empty')).min(1, 'service.run.command needs at least the program').max(64).optional(),
    /** Local target: the folder the command runs in (absolute); default: the rig's own folder. */
    cwd: z.string().optional(),
    /** AWS target: the container image the app node runs (`docker run`), e.g. "ghcr.io/you/hardcount:1.2". */
    image: z.string().min(1).max(255).optional(),
    /**
     * A service that cannot be told its port: the port it always listens on. Without it the rig picks
     * the port and passes it as PORT (and HC_PORT).
     */
    port: z.number().int('port must be a whole number').min(1).max(65535, 'port must be <= 65535').optional(),
    /** How long GET /healthz may take to answer 200 after the start. */
    readyTimeoutSeconds: z.number().int().positive().max(900, 'readyTimeoutSeconds must be <= 900').default(60),
  })
  .superRefine((r, ctx) => {
    const add = (path: Array<string | number>, message: string) => ctx.addIssue({ code: 'custom', path, message });
    if ((r.command === undefined) === (r.image === undefined)) {
      add([], 'give exactly one of "command" (an argv on the local target) or "image" (a container image on an aws app node)');
    }
    if (r.cwd !== undefined && r.command === undefined) add(['cwd'], 'cwd goes with "command" only');
    const program = r.command?.[0];
    if (program !== undefined && !program.startsWith('/') && program.includes('/')) {
      add(['command', 0], `"${program}" is a relative path: give an absolute path, or a bare name found on PATH (the worker that starts it has its own working folder)`);
    }
    if (r.cwd !== undefined && !r.cwd.startsWith('/')) add(['cwd'], `"${r.cwd}" is relative: give an absolute folder`);
    if (r.image !== undefined && /\s/.test(r.image)) add(['image'], 'an image reference has no spaces');
  });
export type ServiceRunSpec = z.infer<typeof ServiceRunSpec>;

/** The service's own settings, one environment variable each (values are strings: quote numbers). */
export const ServiceEnvSpec = z.record(z.string(), z.string({ error: 'a service.env value must be a string (quote numbers and booleans: "20")' }).max(4096));

/** Problems of an env map's names and values (paths under it). */
function envProblems(env: Record<string, string>, withRun: boolean): Array<{ path: string[]; message: string }> {
  const out: Array<{ path: string[]; message: string }> = [];
  for (const [k, v] of Object.entries(env)) {
    const at = (message: string) => out.push({ path: [k], message });
    if (!ENV_NAME.test(k)) at(`"${k}" is not an environment variable name (letters, digits and "_", not starting with a digit)`);
    else if ((RIG_OWNED_ENV as readonly string[]).includes(k)) at(`${k} is set by the rig itself (docs/your-service.md, "The service contract"): remove it`);
    else if (/^RIG_/i.test(k)) at(`${k}: names starting with RIG_ are the rig's own (it marks its processes with them)`);
    else if (SECRET_WORD.test(k) || URL_WITH_PASSWORD.test(v)) {
      at(`${k} looks like a secret: a spec is workflow history and never holds one. Export it in the environment of the \`rig worker\` that starts the service (the service inherits it)`);
    } else if (!withRun) {
      const sw = (Object.keys(REFERENCE_SWITCHES) as Switch[]).find((s) => REFERENCE_SWITCHES[s] === k);
      if (sw) at(`${k} is the reference service's "${sw}" switch: set service.${sw} instead`);
    }
  }
  return out;
}

/** Switches of the reference service: given with a `run`, they would not reach a build that has its own settings. */
const SWITCHES = {
  /** per-minute = #818 fixed, every-request = the hot row (HC_LAST_USED). */
  lastUsed: z.enum(['per-minute', 'every-request']),
  /** per-event = as measured, multi-row = #823 (HC_INSERT). */
  insert: z.enum(['per-event', 'multi-row']),
  /** scan = #819, rollup (HC_AGGREGATE). */
  aggregate: z.enum(['scan', 'rollup']),
};

export const ServiceSpec = z
  .strictObject({
    /** How to start the service under test; absent: the reference service (reference/main.ts). */
    run: ServiceRunSpec.optional(),
    /** The service's settings, each passed as its own environment variable; a variant may override entries. */
    env: ServiceEnvSpec.optional(),
    lastUsed: SWITCHES.lastUsed.default('per-minute'),
    insert: SWITCHES.insert.default('per-event'),
    aggregate: SWITCHES.aggregate.default('scan'),
  })
  .superRefine((s, ctx) => {
    for (const p of envProblems(s.env ?? {}, s.run !== undefined)) ctx.addIssue({ code: 'custom', path: ['env', ...p.path], message: p.message });
    if (!s.run) return;
    for (const sw of Object.keys(REFERENCE_SWITCHES) as Switch[]) {
      if (s[sw] !== SWITCH_DEFAULTS[sw]) {
        ctx.addIssue({
          code: 'custom',
          path: [sw],
          message: `"${sw}" is a switch of the reference service: with service.run, give your build's settings in service.env, e.g. {"${REFERENCE_SWITCHES[sw]}": "${s[sw]}"}`,
        });
      }
    }
  });
export type ServiceSpec = z.infer<typeof ServiceSpec>;

/** A variant's service overrides: the switches it changes and env entries over the campaign's. */
export const ServiceOverridesSpec = z.strictObject({
  lastUsed: SWITCHES.lastUsed.optional(),
  insert: SWITCHES.insert.optional(),
  aggregate: SWITCHES.aggregate.optional(),
  env: ServiceEnvSpec.optional(),
  /** Another build for this variant (two builds compared on one rig): the service restarts with it. */
  run: ServiceRunSpec.optional(),
});
export type ServiceOverridesSpec = z.infer<typeof ServiceOverridesSpec>;

/** The campaign's service with a variant's overrides over it (env merged entry by entry). Pure. */
export function withServiceOverrides(base: ServiceSpec, o: ServiceOverridesSpec): ServiceSpec {
  const out: ServiceSpec = { ...base };
  for (const sw of Object.keys(REFERENCE_SWITCHES) as Switch[]) if (o[sw] !== undefined) (out as Record<Switch, string>)[sw] = o[sw];
  if (o.env !== undefined) out.env = { ...(base.env ?? {}), ...o.env };
  if (o.run !== undefined) out.run = o.run;
  return out;
}

/**
 * What the spec's service cannot be on its target, and the overrides its variants may not make, as
 * issues with paths from the spec's top. `local` runs a command, `aws` an image: each form needs the
 * host that runs it (a shell on this machine; Docker on the app node).
 */
export function serviceSpecProblems(s: { target: string; service: ServiceSpec; variants?: { control: { service: ServiceOverridesSpec }; treatments: Array<{ service: ServiceOverridesSpec }> } }): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  const run = s.service.run;
  if (run?.image !== undefined && s.target !== 'aws') {
    out.push({ path: ['service', 'run', 'image'], message: `an image runs on an aws app node only${s.target === 'local' ? ': on the local target give "command" (the argv that starts your build)' : ''}` });
  }
  if (run?.command !== undefined && s.target !== 'local') {
    out.push({ path: ['service', 'run', 'command'], message: `a command runs on the local target only${s.target === 'aws' ? ': on aws give "image" (a container image the app node runs)' : ''}` });
  }
  const variants = s.variants ? [s.variants.control, ...s.variants.treatments] : [];
  variants.forEach((v, i) => {
    const at = i === 0 ? ['variants', 'control', 'service'] : ['variants', 'treatments', i - 1, 'service'];
    // The build this variant runs: its own run, else the campaign's.
    const vrun = v.service.run ?? run;
    if (v.service.run?.image !== undefined) out.push({ path: [...at, 'run', 'image'], message: 'a variant runs on the local target only: give "command" (the argv that starts that build)' });
    for (const p of envProblems(v.service.env ?? {}, vrun !== undefined)) out.push({ path: [...at, 'env', ...p.path], message: p.message });
    if (!vrun) return;
    for (const sw of Object.keys(REFERENCE_SWITCHES) as Switch[]) {
      if (v.service[sw] !== undefined) out.push({ path: [...at, sw], message: `"${sw}" is a switch of the reference service: with service.run, override your build's settings in env, e.g. {"${REFERENCE_SWITCHES[sw]}": "${v.service[sw]}"}` });
    }
  });
  return out;
}

/** What a target starts: the switches (reference service only), the settings env, and where the build comes from. */
export interface ServiceLaunch {
  lastUsed?: ServiceSpec['lastUsed'];
  insert?: ServiceSpec['insert'];
  aggregate?: ServiceSpec['aggregate'];
  /** Each entry one environment variable of the service (absent when there are none). */
  env?: Record<string, string>;
  run?: ServiceRunSpec;
}

/**
 * The spec's service as a target starts it. The reference service's object is what it was before
 * issue 14 (the three switches) when it has no env, so a rig provisioned before it is reused as is.
 */
export function serviceLaunch(s: ServiceSpec): ServiceLaunch {
  const env = s.env && Object.keys(s.env).length ? { env: { ...s.env } } : {};
  if (s.run) return { run: s.run, ...env };
  return { lastUsed: s.lastUsed, insert: s.insert, aggregate: s.aggregate, ...env };
}

/** The settings a service is started with, as environment variables: the switches as HC_* (reference only), then env. */
export function settingsEnv(s: Pick<ServiceLaunch, 'lastUsed' | 'insert' | 'aggregate' | 'env'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const sw of Object.keys(REFERENCE_SWITCHES) as Switch[]) {
    const v = s[sw];
    if (v !== undefined) out[REFERENCE_SWITCHES[sw]] = v;
  }
  return { ...out, ...(s.env ?? {}) };
}

/** Whether the seed must rebuild the daily rollup: the service aggregates from it (HC_AGGREGATE=rollup, or its switch). */
export function usesRollup(s: Pick<ServiceSpec, 'run' | 'aggregate' | 'env'>): boolean {
  // Without a run, env cannot name HC_AGGREGATE (the switch says it); with one, the switch is not passed.
  return (s.run ? s.env?.HC_AGGREGATE : s.aggregate) === 'rollup';
}

/** Which build is measured, in words for the page and rig.json. */
export function serviceBuild(run: ServiceRunSpec | undefined): string {
  if (!run) return 'the reference service (reference/main.ts)';
  if (run.image !== undefined) return `image ${run.image}${run.port ? ` (port ${run.port})` : ''}`;
  return `command ${(run.command ?? []).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ')}${run.cwd ? ` in ${run.cwd}` : ''}${run.port ? ` (port ${run.port})` : ''}`;
}

/** The service's settings as the page lists them: the reference service's switches (by their spec names), then env. */
export function serviceSettingsList(s: Pick<ServiceSpec, 'run' | 'env' | 'lastUsed' | 'insert' | 'aggregate'>): Array<[string, string]> {
  const env = Object.entries(s.env ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return s.run ? env : [['lastUsed', s.lastUsed], ['insert', s.insert], ['aggregate', s.aggregate], ...env];
}

/** The builds a campaign's variants bring (their own service.run), with the spec field of each. Pure. */
export function variantRuns(spec: { variants?: { control: { service: ServiceOverridesSpec }; treatments: Array<{ service: ServiceOverridesSpec }> } }): Array<{ field: string; run: ServiceRunSpec }> {
  const v = spec.variants;
  if (!v) return [];
  const all = [{ field: 'variants.control.service.run', s: v.control.service }, ...v.treatments.map((t, i) => ({ field: `variants.treatments[${i}].service.run`, s: t.service }))];
  return all.filter((x) => x.s.run !== undefined).map((x) => ({ field: x.field, run: x.s.run! }));
}

/**
 * The container images a campaign runs (the base service's and each variant's `run.image`), each with
 * the spec field that names it, once each: what the AWS preflight reads from their registries. Pure.
 */
export function campaignImages(service: { run?: ServiceRunSpec }, runs: ReadonlyArray<{ field: string; run: ServiceRunSpec }>): Array<{ field: string; image: string }> {
  const all = [...(service.run?.image !== undefined ? [{ field: 'service.run.image', image: service.run.image }] : []), ...runs.filter((r) => r.run.image !== undefined).map((r) => ({ field: `${r.field}.image`, image: r.run.image! }))];
  return all.filter((x, i) => all.findIndex((y) => y.image === x.image) === i);
}
