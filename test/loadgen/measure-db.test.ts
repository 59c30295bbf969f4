// test-mode: alone
// `rig measure --db URL` against the reference service on a real PostgreSQL cluster: the command
// counts its run tag's rows itself (as the owner, in the fixtures' partition), so a standalone repeat
// can reach PASS; a database it cannot use is refused before any load; the password is never printed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Fixtures } from '../../lib/targets/bringup/fixtures';
import { reconcile } from '../../lib/targets/reconcile';
import { freePort } from '../../lib/tools/free-port';
import type { RunningService } from '../../reference/service';
import { hardcountDb, referenceServiceOn, TEST_OWNER_PASSWORD, type HardcountDb } from '../harness/hardcount';
import { api, ev } from '../reference/api-client';
import { rig } from '../harness/rig-cli';

// One cluster for the file (made at the top level: see test/harness/hardcount.ts); passwords are
// checked on TCP (scram), so a wrong one is refused as it would be on a real server.
const dbReady = hardcountDb({ superuserPassword: 'superuser-pw-for-tests' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-measure-db-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let db: HardcountDb;
let fx: Fixtures;
let svc: RunningService;

before(async () => {
  ({ db, fx, svc } = await referenceServiceOn(dbReady));
  // Warm the service: its pool opens (and authenticates) every connection now, not in the measured
  // run's first second. These rows carry their own tag, which no measured run counts.
  const client = api(svc.url, fx.apiKey.reveal());
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.post('/v1/usage-events', { events: [ev('cus_0001', 1, `warm-${round}-${i}`, { rig_run: 'warm-up' })] })),
    );
    for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
  }
});

const env = () => ({ RIG_API_KEY: fx.apiKey.reveal() });
/**
 * 250 one-event requests/s for 6 s: 1,500 samples (thirds of 500: enough to bound each third's p99,
 * so drift is judged, lib/protocol/drift.ts), light enough for the reference service on a busy 2-core
 * machine; limits and slots wide enough (p99 10 s, so the instrument may lag 1 s; 4 s of
 * request slots) that neither the server's speed nor the host's load is what is tested.
 */
const measure = (out: string, runTag: string, extra: string[]) => [
  'measure', '--url', svc.url, '--rate', '250', '--batch', '1', '--seconds', '6', '--max-in-flight', '1000', '--out', out, '--quiet',
  '--run-tag', runTag, '--p99-limit-ms', '10000', '--drift-limit', '1000', ...extra,
];

test('measure --db reconciles its own run tag: PASS (exit 0), reconcile.json beside the verdict, no password printed', async () => {
  assert.ok(db.ownerUrl.includes(TEST_OWNER_PASSWORD), 'the URL given carries the password');
  const out = path.join(dir, 'pass');
  const r = await rig(measure(out, 'db-pass-1', ['--db', db.ownerUrl]), env());
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^reconciled run tag db-pass-1 in tenant \d+, livemode=true: 1500 rows, quantity \d+$/m);
  assert.match(r.stdout, /^ {2}ok {3}rows: rows written 1500 == events claimed 1500$/m);
  assert.match(r.stdout, /^PASS$/m);
  assert.ok(!(r.stdout + r.stderr).includes(TEST_OWNER_PASSWORD), 'the password is never printed');
  const rec = JSON.parse(fs.readFileSync(path.join(out, 'reconcile.json'), 'utf8')) as { run_tag: string; rows_written: number; quantity_gained: number; livemode: boolean; other_mode_rows: number };
  const counted = await reconcile(db.ownerUrl, { runTag: 'db-pass-1', livemode: true });
  assert.deepEqual([rec.run_tag, rec.rows_written, rec.quantity_gained, rec.livemode, rec.other_mode_rows], ['db-pass-1', counted.rows, counted.quantity, true, 0]);
  const verdict = JSON.parse(fs.readFileSync(path.join(out, 'verdict.json'), 'utf8')) as { report: { gate: { reconciled: boolean }; verdict: { state: string }; quantity_claimed: number } };
  assert.deepEqual([verdict.report.gate.reconciled, verdict.report.verdict.state, verdict.report.quantity_claimed], [true, 'PASS', counted.quantity]);
  assert.ok(!fs.readFileSync(path.join(out, 'verdict.json'), 'utf8').includes(TEST_OWNER_PASSWORD));
});

test('the same repeat without --db is UNRECONCILED (exit 3), never PASS', async () => {
  const r = await rig(measure(path.join(dir, 'unreconciled'), 'db-none-1', []), env());
  assert.equal(r.code, 3, r.stdout + r.stderr);
  assert.match(r.stdout, /^UNRECONCILED: every check that ran passed \(threshold, delivered, dropped, failed, samples, drift, instrument\); not checked: rows, quantity/m);
  assert.match(r.stderr, /give --db URL .* or --reconcile rows=N,quantity=Q/);
});

test('measure --db refuses a database it cannot use before any load, naming the URL without its password', async () => {
  const port = await freePort();
  const dead = await rig(measure(path.join(dir, 'dead'), 'db-dead-1', ['--db', `postgres://hardcount_owner:no-such-secret@127.0.0.1:${port}/hardcount`]), env());
  assert.equal(dead.code, 69, dead.stdout + dead.stderr);
  assert.match(dead.stderr, new RegExp(`--db postgres://hardcount_owner:\\*\\*\\*@127\\.0\\.0\\.1:${port}/hardcount: .*ECONNREFUSED.*give the owner role's URL`));
  const wrong = new URL(db.ownerUrl);
  wrong.password = 'wrong-secret';
  const refused = await rig(measure(path.join(dir, 'refused'), 'db-refused-1', ['--db', wrong.toString()]), env());
  assert.equal(refused.code, 2, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /password authentication failed/);
  for (const r of [dead, refused]) assert.ok(!/no-such-secret|wrong-secret/.test(r.stdout + r.stderr), 'no password printed');
  const both = await rig(measure(path.join(dir, 'both'), 'db-both-1', ['--db', db.ownerUrl, '--reconcile', 'rows=1,quantity=1']), env());
  assert.equal(both.code, 2);
  assert.match(both.stderr, /give --db URL .* or --reconcile rows=N,quantity=Q .*not both/);
  const notPg = await rig(measure(path.join(dir, 'not-pg'), 'db-http-1', ['--db', 'http://127.0.0.1/']), env());
  assert.equal(notPg.code, 2);
  assert.match(notPg.stderr, /--db must be a postgres:\/\/ URL/);
  // nothing was offered for any of them
  for (const tag of ['db-dead-1', 'db-refused-1', 'db-both-1', 'db-http-1']) assert.equal((await reconcile(db.ownerUrl, { runTag: tag, livemode: true })).rows, 0, tag);
});
