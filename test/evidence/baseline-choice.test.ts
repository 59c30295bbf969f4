// test-mode: unit
// The baseline the report step chose (baseline.json, written before the folder is sealed) is part of
// the evidence: the page compares with it whenever it is rebuilt, names how it was chosen, and says so
// when there was none or its folder is not beside this one. (The schedule's own search is in
// test/campaign/schedule.test.ts, against a real Temporal server.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { chooseBaseline, newestHere } from '../../activities/baseline-choice';
import { specHash } from '../../lib/evidence/spec-hash';
import { BASELINE_FILE } from '../../lib/evidence/layout';
import { buildManifest } from '../../lib/evidence/manifest';
import type { BaselineChoice } from '../../lib/evidence/records';
import { buildReport, renderMarkdown } from '../../lib/evidence/report';
import { makeFixtureCampaign } from './fixture-campaign';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-baseline-choice-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const small = { repeats: 3, repeatSeconds: 30, ceiling: false, denominator: false } as const;

async function withChoice(campaignId: string, seed: number, choice: BaselineChoice): Promise<string> {
  const f = await makeFixtureCampaign({ seed, root, campaignId, unsealed: true, ...small });
  fs.writeFileSync(path.join(f.dir, BASELINE_FILE), JSON.stringify(choice));
  await buildManifest(f.dir);
  return f.dir;
}

test('a pinned baseline: a workflow id maps to its campaign folder, and the spec\'s value is named', async () => {
  assert.deepEqual(await chooseBaseline('weekly-2026-11-30T03:00:00Z'), {
    how: 'pinned',
    baseline_id: 'weekly-2026-11-30T03-00-00Z',
    why: "pinned by the spec's baseline: weekly-2026-11-30T03:00:00Z",
  });
  // Outside an activity (`rig step`) there is no schedule to search: no baseline.
  assert.equal(await chooseBaseline(undefined), null);
});

test('the page compares with the chosen baseline every time it is rebuilt, and names how it was chosen', async () => {
  await makeFixtureCampaign({ seed: 11, root, campaignId: 'base', ...small });
  const dir = await withChoice('next', 12, { how: 'pinned', baseline_id: 'base', why: "pinned by the spec's baseline: base" });
  const model = await buildReport(dir);
  assert.equal(model.baseline?.baseline_id, 'base');
  assert.equal(model.baseline_choice?.compared, true);
  const page = renderMarkdown(model);
  assert.match(page, /## Compared with the baseline\n\nBaseline: base, pinned by the spec's baseline: base\.\n/);
  assert.equal(renderMarkdown(await buildReport(dir)), page, 'the same evidence renders the same page');
});

test('no earlier held run, or a baseline whose folder is elsewhere: the page says so and compares nothing', async () => {
  const none = await withChoice('first', 21, { how: 'schedule', schedule_id: 'weekly', baseline_id: null, why: 'no earlier run of schedule weekly held: nothing to compare with yet' });
  const m1 = await buildReport(none);
  assert.equal(m1.baseline, undefined);
  assert.match(renderMarkdown(m1), /Baseline: none\. No earlier run of schedule weekly held: nothing to compare with yet\./);
  const away = await withChoice('orphan', 22, { how: 'pinned', baseline_id: 'gone', why: "pinned by the spec's baseline: gone" });
  const m2 = await buildReport(away);
  assert.equal(m2.baseline, undefined);
  assert.match(renderMarkdown(m2), /Baseline: gone, pinned by the spec's baseline: gone; its folder gone is not beside this one \(.*\): nothing compared\./);
});

test('a scheduled run\'s baseline ran here and with the same spec: newer runs on another host or with another spec are passed over, and counted', () => {
  const results = fs.mkdtempSync(path.join(root, 'results-'));
  const spec = { name: 'weekly', target: 'local', sustained: { repeats: 5 }, baseline: 'ignored' };
  const put = (campaignId: string, s: Record<string, unknown>) => {
    fs.mkdirSync(path.join(results, campaignId), { recursive: true });
    fs.writeFileSync(path.join(results, campaignId, 'spec.json'), JSON.stringify(s));
  };
  // Newest first: w4 ran on another host (no folder here), w3 with another spec, w2 here with this spec (keys in another order, another baseline), w1 too.
  put('weekly-w3', { ...spec, sustained: { repeats: 3 } });
  put('weekly-w2', { sustained: { repeats: 5 }, target: 'local', name: 'weekly' });
  put('weekly-w1', spec);
  const at = (d: number) => new Date(Date.UTC(2026, 10, d));
  const candidates = [
    { workflowId: 'weekly-w1', startTime: at(1) },
    { workflowId: 'weekly-w4', startTime: at(22) },
    { workflowId: 'weekly-w2', startTime: at(8) },
    { workflowId: 'weekly-w3', startTime: at(15) },
  ];
  const here = { resultsDir: results, specHash: specHash(spec) };
  assert.equal(specHash({ ...spec, baseline: 'another', $schema: 'x' }), here.specHash, 'baseline and $schema do not count');
  const r = newestHere(candidates, here);
  assert.equal(r.best?.workflowId, 'weekly-w2');
  assert.equal(r.passedOver, '1 that ran on another host (no evidence folder here) and 1 with another spec');
  // None here with this spec: none chosen, both kinds counted.
  const none = newestHere(candidates, { resultsDir: results, specHash: specHash({ ...spec, target: 'aws' }) });
  assert.equal(none.best, undefined);
  assert.equal(none.passedOver, '1 that ran on another host (no evidence folder here) and 3 with another spec');
  // Without `here` (no evidence of its own): the newest.
  assert.equal(newestHere(candidates, undefined).best?.workflowId, 'weekly-w4');
});
