// The bad specs of issue 26, one per refusal class, with what the CLI must answer: the exit code, the
// field it names and the words of the fix. Used by spec-refusals.test.ts (the CLI) and
// spec-schema.test.ts (the JSON Schema, which must refuse each of them too, or say why it cannot).
import fs from 'node:fs';
import path from 'node:path';
import { EXIT } from '../../client/exit-codes';

export interface RefusalCase {
  what: string;
  /** The issue's class. */
  class: string;
  /** The spec as data; or `text`, the file's bytes; or `file`, a path that is not a file. */
  spec?: unknown;
  text?: string;
  file?: 'missing' | 'directory';
  args?: string[];
  code: number;
  /** The field the refusal names (a path as the CLI prints it). */
  field?: string;
  message?: RegExp;
  /**
   * Why the JSON Schema cannot refuse it, when it cannot (a file that is not JSON, a rule across
   * fields or against the machine that JSON Schema does not express); absent: the schema refuses it.
   */
  schemaCannot?: string;
}

const root = path.resolve(__dirname, '..', '..');
type Spec = Record<string, unknown> & { seed: Record<string, unknown>; sustained: Record<string, unknown> & { configurations: Array<Record<string, unknown>> } };
/** examples/rehearsal.json, changed by `edit`. */
export function rehearsal(edit: (s: Spec) => void = () => {}): Spec {
  const s = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'rehearsal.json'), 'utf8')) as Spec;
  edit(s);
  return s;
}

const ladder = (edit: (l: Record<string, unknown>) => void) =>
  rehearsal((s) => {
    delete (s as Record<string, unknown>).sustained;
    const l: Record<string, unknown> = { rates: [100, 200], batch: 10 };
    edit(l);
    s.ladder = l;
  });

export const REFUSED_SPECS: RefusalCase[] = [
  { what: 'repeats 101', class: 'limits', spec: rehearsal((s) => (s.sustained.repeats = 101)), code: EXIT.USAGE, field: 'sustained.repeats', message: /repeats must be <= 100 \(got 101\)/ },
  { what: 'ladder.batch 1001', class: 'limits', spec: ladder((l) => (l.batch = 1001)), code: EXIT.USAGE, field: 'ladder.batch', message: /batch must be <= 1000 \(got 1001\)/ },
  { what: 'warmupSeconds 4000', class: 'limits', spec: rehearsal((s) => (s.sustained.warmupSeconds = 4000)), code: EXIT.USAGE, field: 'sustained.warmupSeconds', message: /warmupSeconds must be <= 3600 \(got 4000\)/ },
  { what: 'seed.customers 200000', class: 'limits', spec: rehearsal((s) => (s.seed.customers = 200_000)), code: EXIT.USAGE, field: 'seed.customers', message: /customers must be <= 100000 \(got 200000\)/ },
  { what: 'repeats 1e20', class: 'limits', spec: rehearsal((s) => (s.sustained.repeats = 1e20)), code: EXIT.USAGE, field: 'sustained.repeats', message: /repeats must be (<= 100|a whole number no larger than)/ },
  { what: 'a mistyped field', class: 'unknown field', spec: rehearsal((s) => ((s.sustained as Record<string, unknown>).repeates = 3)), code: EXIT.USAGE, field: 'sustained.repeates', message: /did you mean "repeats"\? \(allowed in sustained: "repeats", /, },
  { what: 'an API key inline', class: 'secrets', spec: rehearsal((s) => (s.apiKey = 'hc_live_123')), code: EXIT.USAGE, field: 'apiKey', message: /"apiKey" would carry a secret inline: a secret is never written in the spec .*none is needed: bring-up makes the campaign.s own API key/ },
  // Temporal's key is the connection's, which bring-up does not make: the fix is where the temporal CLI reads it.
  { what: 'a Temporal API key inline', class: 'secrets', spec: rehearsal((s) => (s.temporalApiKey = 'tmprl_abc')), code: EXIT.USAGE, field: 'temporalApiKey', message: /"temporalApiKey" would carry a secret inline: .*the rig reaches Temporal with the temporal CLI's own settings, never the spec: export TEMPORAL_API_KEY .*api_key in a profile of temporal\.toml .*`rig doctor` shows which key is used/ },
  { what: 'a Temporal API key in a temporal block', class: 'secrets', spec: rehearsal((s) => (s.temporal = { address: 'ns.tmprl.cloud:7233', apiKey: 'tmprl_abc' })), code: EXIT.USAGE, field: 'temporal.apiKey', message: /"apiKey" would carry a secret inline: .*export TEMPORAL_API_KEY/ },
  {
    what: 'a service URL with its password',
    class: 'secrets',
    spec: rehearsal((s) => {
      s.target = 'existing';
      s.existing = { serviceUrl: 'https://user:hunter2@svc.example', databaseUrlFrom: { env: 'HC_DB' } };
    }),
    code: EXIT.USAGE,
    field: 'existing.serviceUrl',
    message: /holds a URL with an inline password/,
    schemaCannot: 'a password inside a URL string is a pattern over any string field; the schema checks the fields, not what a URL holds',
  },
  { what: 'a missing comma', class: 'JSON syntax', text: '{\n  "name": "x"\n  "target": "local"\n}\n', code: EXIT.USAGE, message: /is not valid JSON: .* at line 3, column 3/, schemaCannot: 'not JSON: nothing for a schema to validate' },
  { what: 'a path that does not exist', class: 'missing file', file: 'missing', code: EXIT.USAGE, message: /no such file: give the path of a spec file/, schemaCannot: 'no file' },
  { what: 'a folder', class: 'directory', file: 'directory', code: EXIT.USAGE, message: /is a directory: give the path of a spec file in it/, schemaCannot: 'no file' },
  {
    what: 'two configurations named alike',
    class: 'duplicate names',
    spec: rehearsal((s) => (s.sustained.configurations[1].name = 'single')),
    code: EXIT.USAGE,
    field: 'sustained.configurations[1].name',
    message: /configuration name "single" is given twice/,
    schemaCannot: 'uniqueness of one property across array items (uniqueItems compares whole items)',
  },
  // Issue 47 item 3: what is measured under one name shares a folder and run tags (each takes the other's verdict and rows).
  { what: 'a ladder rate given twice', class: 'duplicate names', spec: ladder((l) => (l.rates = [100, 200, 100])), code: EXIT.USAGE, field: 'ladder.rates[2]', message: /ladder rate 100 is given twice \(also ladder\.rates\[0\]\): each rung's folder and run tags are named by its rate \(rung-100\); give each rate once/ },
  {
    what: 'two configurations measured under one name by their variants',
    class: 'duplicate names',
    spec: rehearsal((s) => {
      s.sustained.configurations[0].name = 'a';
      s.sustained.configurations[1].name = 'a.b';
      s.variants = { order: 'blocks', control: { name: 'c' }, treatments: [{ name: 'b.c' }] };
    }),
    code: EXIT.USAGE,
    field: 'variants.control.name',
    message: /configuration "a\.b" under variant "c" is measured as "a\.b\.c", as configuration "a" under variant "b\.c" is \(one evidence folder, one run tag for both\): rename a configuration or a variant/,
    schemaCannot: 'names joined across two arrays (configurations and variants)',
  },
  {
    what: 'a configuration named "ceiling" beside the ceiling',
    class: 'duplicate names',
    spec: rehearsal((s) => (s.sustained.configurations[1].name = 'ceiling')),
    code: EXIT.USAGE,
    field: 'sustained.configurations[1].name',
    message: /configuration name "ceiling" is the closed-loop ceiling's .*: rename the configuration/,
    schemaCannot: 'a name against another block (the ceiling) of the spec',
  },
  { what: 'shared_buffers "eight gigs"', class: 'PG size', spec: rehearsal((s) => (s.database = { shared_buffers: 'eight gigs' })), code: EXIT.USAGE, field: 'database.shared_buffers', message: /must be a PostgreSQL size: a whole number with a unit kB, MB, GB or TB/ },
  {
    what: 'min_wal_size above max_wal_size',
    class: 'min_wal_size > max_wal_size',
    spec: rehearsal((s) => (s.database = { min_wal_size: '4GB', max_wal_size: '1GB' })),
    code: EXIT.USAGE,
    field: 'database.min_wal_size',
    message: /min_wal_size 4GB is above max_wal_size 1GB: PostgreSQL needs min_wal_size <= max_wal_size/,
    schemaCannot: 'a comparison of two sizes written with units',
  },
  {
    what: 'a 2e10-row seed with watchdogMinutes 1e7',
    class: 'seed vs disk',
    spec: rehearsal((s) => {
      s.seed.historyRows = 2e10;
      s.watchdogMinutes = 1e7;
    }),
    code: EXIT.USAGE,
    field: 'seed.historyRows',
    message: /20000000000 history rows need at least 1862\.6 GB .* more than the [\d.]+ GB free in .*: lower seed\.historyRows/,
    schemaCannot: "the machine's free disk (the plan's seed time against the watchdog is the CLI's too)",
  },
  {
    what: 'a seed larger than the RDS volume',
    class: 'seed vs disk',
    spec: (() => {
      const s = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')) as { seed: { historyRows: number }; watchdogMinutes: number };
      s.seed.historyRows = 2e9;
      s.watchdogMinutes = 10_000;
      return s;
    })(),
    code: EXIT.USAGE,
    field: 'seed.historyRows',
    message: /more than the RDS volume's 100 GB \(aws\.database\.storage\.sizeGb\): lower seed\.historyRows, or raise sizeGb/,
    schemaCannot: 'rows times bytes a row against sizeGb: arithmetic across fields',
  },
  {
    what: 'repeats too short for 1,000 samples',
    class: 'too-short repeats',
    spec: rehearsal((s) => {
      s.sustained.repeatSeconds = 5;
      s.sustained.configurations = [{ name: 'single', eventsPerSecond: 20, batch: 1, p99LimitMs: 50 }];
    }),
    code: EXIT.USAGE,
    field: 'sustained.repeatSeconds',
    message: /100 requests per repeat .*fewer than the 1000 the gate requires: .*set sustained\.repeatSeconds >= 50.*--allow-unjudgeable/,
    schemaCannot: 'rate / batch x seconds against the gate minimum: arithmetic across fields',
  },
  { what: 'both sustained and ladder', class: 'one of sustained/ladder', spec: rehearsal((s) => (s.ladder = { rates: [100], batch: 10 })), code: EXIT.USAGE, field: 'sustained', message: /give exactly one of "sustained" \(gated repeats\) or "ladder"/ },
  { what: 'target aws without its block', class: 'target-specific blocks', spec: rehearsal((s) => (s.target = 'aws')), code: EXIT.USAGE, field: 'aws', message: /target "aws" needs an "aws" block/ },
  { what: 'an aws block on a local campaign', class: 'target-specific blocks', spec: rehearsal((s) => (s.aws = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')).aws)), code: EXIT.USAGE, field: 'aws', message: /an "aws" block is only read with target "aws"/ },
];
