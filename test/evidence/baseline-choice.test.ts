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
import { chooseBaseline } from '../../activities/baseline-choice';
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
