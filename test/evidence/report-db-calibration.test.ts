// test-mode: unit
// The page never looks calibrated when the database was not (issue 47, item 6): without
// calibration/database.json (target aws or existing, an RDS-fidelity rig, calibrate: false) every
// database heading and column carries "database not calibrated: <why>", and Conditions says why, in
// Markdown and HTML; a calibrated campaign says CALIBRATED n/n and carries no mark. And an existing
// target's empty postgres.log is shown as no log read, never as a log that was searched.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildManifest } from '../../lib/evidence';
import { MANIFEST_FILE, POSTGRES_LOG, stepFile } from '../../lib/evidence/layout';
import { buildReport, renderHtml, renderMarkdown, type ReportModel } from '../../lib/evidence/report';
import { ONE_CONFIG, makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-dbcal-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let fx: Fixture;
before(async () => {
  fx = await makeFixtureCampaign({
    seed: 11,
    root,
    campaignId: 'dbcal',
    repeats: 2,
    repeatSeconds: 20,
    ...ONE_CONFIG,
    plans: [{ config: 'only', repeat: 1, stallsAt: [5] }],
    noDbCalibration: true,
  });
});

/** target "existing", with the example's block and its seed (an existing database is not seeded unasked). */
const asExisting = (spec: Record<string, unknown>) => ({ ...spec, target: 'existing', existing: example('existing.json').existing, seed: { ...(spec.seed as object), historyRows: 0 } });
const example = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, '../../examples', name), 'utf8')) as Record<string, unknown>;

/** A copy of the fixture with `edit` applied, resealed, and its page's model. */
async function variant(name: string, edit: (dir: string, spec: Record<string, unknown>) => Record<string, unknown> | void): Promise<ReportModel> {
  const dir = path.join(root, name);
  fs.cpSync(fx.dir, dir, { recursive: true });
  const specFile = path.join(dir, 'spec.json');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Record<string, unknown>;
  const next = edit(dir, spec);
  if (next) fs.writeFileSync(specFile, JSON.stringify(next));
  fs.rmSync(path.join(dir, MANIFEST_FILE));
  await buildManifest(dir);
  return buildReport(dir);
}

/** Every database heading and column of the page, in Markdown and HTML, carries `mark`; Conditions says `why`. */
function assertMarked(m: ReportModel, mark: string, why: RegExp): void {
  const md = renderMarkdown(m);
  const html = renderHtml(m);
  const esc = mark.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  assert.match(md, new RegExp(`### What stops it \\[${esc}\\]`));
  assert.match(md, new RegExp(`\\| WAL per event \\[${esc}\\] \\|`));
  assert.match(html, new RegExp(`<h3>What stops it \\[${esc.replace(/"/g, '&quot;')}\\]</h3>`));
  assert.match(md, new RegExp(`\\| database calibration \\| NOT CALIBRATED: ${why.source}`));
  assert.match(html, new RegExp(`database calibration</td><td>NOT CALIBRATED: ${why.source.replace(/"/g, '&quot;')}`));
}

test('calibrate: false: every database figure says the database was not calibrated, and why', async () => {
  const m = await variant('calibrate-false', (_d, spec) => ({ ...spec, calibrate: false }));
  assert.equal(m.db_calibration?.mark, 'database not calibrated: calibrate: false');
  assertMarked(m, 'database not calibrated: calibrate: false', /the spec says calibrate: false, so the database side was not calibrated/);
});

test('target aws and target existing: the database calibration did not run there, and the page says so', async () => {
  const aws = await variant('aws', (_d, spec) => ({ ...spec, target: 'aws', aws: example('aws.json').aws }));
  assertMarked(aws, 'database not calibrated: target "aws"', /target "aws": the database calibration runs only on a local rig's own cluster/);
  const existing = await variant('existing', (_d, spec) => asExisting(spec));
  assertMarked(existing, 'database not calibrated: target "existing"', /target "existing": the database calibration runs only on a local rig's own cluster/);
});

test('an RDS-fidelity rig: the calibrate-database step refused (no superuser), and the page says so with its reason', async () => {
  const m = await variant('rds-fidelity', (dir, spec) => {
    // The step as the campaign records it: its file, and its entry in result.json's list.
    const resultFile = path.join(dir, 'result.json');
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as { steps: Array<Record<string, unknown>> };
    const i = result.steps.findIndex((st) => st.step === 'bring-up');
    assert.ok(i >= 0, 'the fixture has a bring-up step');
    const step = { ...result.steps[i], step: 'calibrate-database', summary: 'database calibration not run: needs a superuser; hardcount_admin is not one' };
    result.steps.splice(i + 1, 0, step);
    fs.writeFileSync(resultFile, JSON.stringify(result));
    fs.writeFileSync(path.join(dir, stepFile(98, 'calibrate-database')), JSON.stringify(step));
    return { ...spec, local: { rdsFidelity: true } };
  });
  assertMarked(m, 'database not calibrated: RDS-fidelity rig', /the calibrate-database step: database calibration not run: needs a superuser; hardcount_admin is not one/);
});

test('a calibrated database: CALIBRATED n/n in Conditions and no mark; a failed case keeps its own mark; a local rig without the record says so', async () => {
  const none = await variant('no-record', () => undefined);
  assertMarked(none, 'database not calibrated: no record', /no calibration\/database\.json in the evidence \(a campaign recorded before the database calibration, or its step did not finish\)/);
  const write = (cases: Array<{ name: string; ok: boolean }>) => (dir: string) => {
    fs.writeFileSync(path.join(dir, 'calibration/database.json'), JSON.stringify({ calibrated: cases.every((c) => c.ok), passed: cases.filter((c) => c.ok).length, total: cases.length, cases }));
  };
  const ok = await variant('calibrated', write([{ name: 'lock wait', ok: true }, { name: 'WAL per event', ok: true }]));
  assert.equal(ok.db_calibration?.mark, null);
  assert.match(renderMarkdown(ok), /\| database calibration \| CALIBRATED 2\/2 \|/);
  assert.doesNotMatch(renderMarkdown(ok), /not calibrated|NOT CALIBRATED/);
  const failed = await variant('cal-failed', write([{ name: 'lock wait', ok: false }, { name: 'WAL per event', ok: true }]));
  assert.match(renderMarkdown(failed), /### What stops it \[database NOT CALIBRATED \(lock wait\)\]/);
  assert.match(renderMarkdown(failed), /\| database calibration \| database NOT CALIBRATED \(lock wait\): 1\/2 cases passed \|/);
});

test("target existing's empty postgres.log: the page says no log was read, never that one was searched", async () => {
  const empty = (dir: string) => {
    for (const k of [1, 2]) fs.writeFileSync(path.join(dir, 'repeats/only', `r${k}-a1`, POSTGRES_LOG), '');
  };
  const existing = await variant('existing-log', (dir, spec) => {
    empty(dir);
    return asExisting(spec);
  });
  const tails = existing.configurations[0].repeats.find((r) => r.tails)?.tails;
  assert.equal(tails?.postgres_log, false);
  const note = 'no postgres.log was read (target "existing": the server\'s log is the deployment\'s, and the rig reads none), so no log line could be matched to a vacuum pass or a checkpoint';
  assert.ok(renderMarkdown(existing).includes(note), 'the Markdown page says no log was read');
  assert.ok(renderHtml(existing).includes(note.replace(/"/g, '&quot;')), 'the HTML page says no log was read');
  // The same empty file on a local rig was read, and found nothing logged: said as such.
  const local = await variant('local-empty-log', (dir) => empty(dir));
  assert.match(renderMarkdown(local), /its postgres\.log is empty \(nothing was logged in the window\), so no log line could be matched/);
});
