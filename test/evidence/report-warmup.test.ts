// test-mode: unit
// The page and the warm-up, and the page's first line: a warm-up folder is shown under Runs marked
// "warm-up, not measured", stated in Method and Conditions, and changes no counted figure; a campaign
// run without calibration says UNCALIBRATED first, one left dirty says DIRTY.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildManifest } from '../../lib/evidence';
import { buildReport, renderHtml, renderMarkdown, renderAtAGlanceText, type ReportModel } from '../../lib/evidence/report';
import { makeFixtureCampaign, type Fixture } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-report-warmup-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let fx: Fixture;
let plain: ReportModel;
before(async () => {
  fx = await makeFixtureCampaign({ seed: 21, root, repeats: 3, repeatSeconds: 30 });
  plain = await buildReport(fx.dir);
});

/** A copy of the fixture, changed by `edit`, with its manifest made anew (as a campaign would have sealed it). */
async function variant(name: string, edit: (dir: string) => void): Promise<string> {
  const dir = path.join(root, name);
  fs.cpSync(fx.dir, dir, { recursive: true });
  edit(dir);
  fs.rmSync(path.join(dir, 'manifest.json'));
  await buildManifest(dir);
  return dir;
}

const json = (file: string, value: unknown) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
};

test('a warm-up is shown under Runs as "warm-up, not measured", stated in Method and Conditions, and counted nowhere', async () => {
  const config = fx.spec.sustained!.configurations[0];
  const dir = await variant('with-warmup', (d) => {
    const w = path.join(d, 'warmup', config.name, 'a1');
    fs.mkdirSync(w, { recursive: true });
    // Any valid stream will do: the first repeat's, standing in for what the warm-up offered.
    fs.copyFileSync(path.join(d, 'repeats', config.name, 'r1-a1', 'samples.csv.gz'), path.join(w, 'samples.csv.gz'));
    const verdict = JSON.parse(fs.readFileSync(path.join(d, 'repeats', config.name, 'r1-a1', 'verdict.json'), 'utf8')) as { events_claimed: number; quantity_claimed: number };
    json(path.join(w, 'load.json'), { started_at: '2026-08-16T09:59:00.000Z', run_tag: 'h.single.warmup.a1', rate: config.eventsPerSecond, batch: config.batch, seconds: 30 });
    json(path.join(w, 'reconcile.json'), { run_tag: 'h.single.warmup.a1', rows_written: verdict.events_claimed, quantity_gained: verdict.quantity_claimed });
    json(path.join(w, 'warmup.json'), { configuration: config.name, run_tag: 'h.single.warmup.a1', seconds: 30, measured: false, ok: true, reasons: [] });
  });
  const m = await buildReport(dir);
  assert.equal(m.warmups.length, 1);
  const w = m.warmups[0];
  assert.deepEqual([w.config, w.attempt, w.reconciled, w.ok_to_measure], [config.name, 1, true, true]);
  assert.ok(w.p99_ms !== null && w.sent !== null && w.sent > 0);
  // Nothing counted: every configuration's summary is what it was without the warm-up.
  assert.deepEqual(
    m.configurations.map((c) => c.summary),
    plain.configurations.map((c) => c.summary),
  );
  const md = renderMarkdown(m);
  assert.match(md, /### Warm-up, not measured/);
  assert.match(md, /\| warm-up, not measured \|/);
  assert.ok(m.method.some((l) => /warm-up ran against the target .* none of them is counted, gated or pooled/.test(l)), m.method.join('\n'));
  assert.match(md, /\| warm-up \| 10 s per configuration, then a cool-down; 1 warm-up run in the evidence \(not measured\) \|/);
  assert.match(renderHtml(m), /<h3 id="warm-up">Warm-up, not measured<\/h3>/);
  assert.match(renderAtAGlanceText(m), /warm-up single \(not measured\): p99 [\d.]+ ms, 0 failed/);
});

test('a campaign run with calibrate: false says UNCALIBRATED on the page\'s first line', async () => {
  const dir = await variant('uncalibrated', (d) => {
    const spec = JSON.parse(fs.readFileSync(path.join(d, 'spec.json'), 'utf8')) as Record<string, unknown>;
    json(path.join(d, 'spec.json'), { ...spec, calibrate: false });
  });
  const m = await buildReport(dir);
  assert.match(renderMarkdown(m).split('\n')[0], /^# UNCALIBRATED: /);
  assert.match(renderAtAGlanceText(m).split('\n')[0], /^UNCALIBRATED/);
  assert.match(renderHtml(m), /<h1>UNCALIBRATED: /);
  assert.doesNotMatch(renderMarkdown(plain).split('\n')[0], /UNCALIBRATED/);
});

test('a campaign left dirty after teardown says DIRTY on the page\'s first line, with what was left', async () => {
  const dir = await variant('dirty', (d) => {
    const result = JSON.parse(fs.readFileSync(path.join(d, 'result.json'), 'utf8')) as Record<string, unknown>;
    json(path.join(d, 'result.json'), { ...result, status: 'dirty', cleanAfter: 'dirty: postgres on 127.0.0.1:54999' });
  });
  const md = renderMarkdown(await buildReport(dir));
  assert.match(md.split('\n')[0], /^# DIRTY: /);
  assert.match(md, /\*\*DIRTY \(the clean-check after teardown found leftovers: dirty: postgres on 127\.0\.0\.1:54999\)\.\*\*/);
});
