// An instrument failure is the instrument's (issue 34), provoked for real: the generator child of
// every measured repeat blocks its own event loop 150 ms each second (RIG_TEST_LATE_GENERATOR,
// limited by RIG_TEST_LATE_GENERATOR_TAG to the repeats' run tags, so bring-up is untouched), so its
// requests leave late and the instrument gate fails. The repeat is INVALID, not failed: it is run
// again (attempt 2, a folder and run tag of its own), stalls again, and the configuration reads NOT
// JUDGED (instrument). `rig campaign start --wait` and its --summary-export say exit 4, never 99; the
// page lists both attempts as INVALID with why. One repeat of 6 s, twice: the cheapest campaign that
// shows it (no calibration: a calibration needs the host to itself, test/loadgen/calibration-*.test.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import type { CampaignSummary } from '../../client/summary-export';
import { campaignEnv, tinySpec } from '../harness/campaign';
import { rig } from '../harness/rig-cli';

test('a repeat whose generator stalls is invalid and run again; stalled again, its configuration is NOT JUDGED (instrument) and the CLI exits 4', async () => {
  const env = await campaignEnv();
  process.env.RIG_TEST_LATE_GENERATOR = '150:1000';
  process.env.RIG_TEST_LATE_GENERATOR_TAG = '\\.r\\d+\\.a\\d+$';
  await env.inProcessWorker();
  const id = 'instrument-invalid';
  const specFile = path.join(env.dir, 'stall.json');
  fs.writeFileSync(specFile, JSON.stringify(tinySpec({ sustained: { ...tinySpec().sustained!, repeats: 1, warmupSeconds: 0, cooldownSeconds: 1 } })));
  const summaryFile = path.join(env.dir, 'summary.json');
  const cli = await rig(['campaign', 'start', specFile, '--id', id, '--wait', '--summary-export', summaryFile], env.childEnv, 300_000);
  delete process.env.RIG_TEST_LATE_GENERATOR;
  delete process.env.RIG_TEST_LATE_GENERATOR_TAG;
  const result = (await env.client.workflow.getHandle(id).result()) as CampaignResult;
  const said = `${cli.stdout}\n${cli.stderr}\n${JSON.stringify(result.repeats.map((r) => [r.dir, r.invalid, r.reasons]), null, 1)}`;
  assert.equal(cli.code, 4, said);
  assert.match(cli.stdout, /campaign instrument-invalid: NOT-JUDGED/);
  assert.match(cli.stdout, /single .*NOT JUDGED \(instrument\).*\(\+2 invalid, not counted\)/);

  const summary = JSON.parse(fs.readFileSync(summaryFile, 'utf8')) as CampaignSummary;
  assert.equal(summary.exitCode, 4);
  assert.equal(summary.status, 'not-judged');
  assert.deepEqual(summary.configurations.map((c) => [c.name, c.state, c.ran, c.passed, c.held]), [['single', 'not judged (instrument)', 0, 0, false]]);

  // Both attempts kept: the first, and its one re-run, each invalid on the instrument's lateness.
  assert.deepEqual(result.repeats.map((r) => [r.index, r.attempt, r.passed, r.dir]), [
    [1, 1, false, 'repeats/single/r1-a1'],
    [1, 2, false, 'repeats/single/r1-a2'],
  ]);
  for (const r of result.repeats) {
    assert.match(r.invalid ?? '', /^instrument: schedule lag p99 [\d.]+ ms > [\d.]+ ms/, JSON.stringify(r.reasons));
    assert.ok(r.reasons.some((x) => x.startsWith('instrument late:')), 'the verdict itself still names the late instrument');
    assert.ok(fs.existsSync(path.join(result.resultsDir, r.dir, 'verdict.json')), `${r.dir} judged and kept`);
  }
  assert.notEqual(result.repeats[0].runTag, result.repeats[1].runTag, 'the re-run has a run tag of its own');
  assert.deepEqual(result.interrupted, []);
  assert.equal(result.rig, 'destroyed');

  // The page shows both attempts, INVALID, with why; the configuration NOT JUDGED (instrument).
  const page = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  assert.equal(page.match(/\| r1-a[12] \| INVALID \|/g)?.length, 2, page);
  assert.match(page, /invalid \(instrument: schedule lag p99/);
  assert.match(page, /NOT JUDGED \(instrument\): 1 of 1 repeat\(s\) with no valid attempt/);
  const log = fs.readFileSync(path.join(result.resultsDir, 'campaign.log'), 'utf8');
  assert.match(log, /single repeat 1 \(attempt 2\) is INVALID \(instrument: /);
  await env.assertClean();
});
