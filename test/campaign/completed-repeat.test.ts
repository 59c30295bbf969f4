// A completed measurement is a result; only an interrupted one is re-run (activities/repeat.ts).
//
// 1. A real campaign of 3 repeats on the local rig whose first reconciliation throws once (the test
//    hook RIG_TEST_FAIL_RECONCILE_ONCE): that repeat is FAIL with the reason, it is not measured again,
//    and it counts in M: the configuration reads N/3 with N the repeats that passed (2/3 on a rig that
//    held the other two), never 3/3.
// 2. On the rig it kept, runRepeat called directly as `rig step` does:
//    - a worker lost after the load ended and before the verdict: the next attempt judges that
//      attempt's stream, under its run tag, and measures nothing;
//    - judged but never delivered (a Temporal outage): the next attempt returns that judgement;
//    - still running in this worker when the next attempt comes (the server timed it out in an
//      outage): the next attempt waits for it and counts it, no second load;
//    - a load that throws is interrupted with the error text; a folder left without a word is a
//      heartbeat timeout; the attempt after them measures and lists both.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { HEARTBEAT_TIMEOUT, attemptDir, runRepeat } from '../../activities/repeat';
import { rigHandle, teardownRig } from '../../activities/rig-lifecycle';
import type { RepeatInput } from '../../activities/contract';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { campaignEnv, tinySpec } from '../harness/campaign';

const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

test('a completed measurement is a result, counted; only an interrupted one is run again', async (t) => {
  const env = await campaignEnv();
  process.env.RIG_TEST_FAIL_RECONCILE_ONCE = path.join(env.dir, 'reconcile-failed-once');
  await env.inProcessWorker();
  const id = 'completed-repeat';
  const spec = tinySpec({ end: 'keep', sustained: { ...tinySpec().sustained!, warmupSeconds: 0, cooldownSeconds: 1 } });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  const result = (await handle.result()) as CampaignResult;
  const evidence = (rel: string) => path.join(result.resultsDir, rel);

  await t.test('reconciliation throws once after a completed load: that repeat is FAIL with the reason and counts in M', () => {
    assert.ok(fs.existsSync(process.env.RIG_TEST_FAIL_RECONCILE_ONCE!), 'the hook fired');
    const r1 = result.repeats.find((r) => r.index === 1)!;
    assert.equal(r1.attempt, 1, 'not measured again');
    assert.equal(r1.passed, false);
    assert.ok(r1.reasons.some((r) => /^after the load: reconcile failed: test hook RIG_TEST_FAIL_RECONCILE_ONCE/.test(r)), r1.reasons.join('; '));
    assert.deepEqual(result.interrupted, [], 'nothing was interrupted');
    // Counted repeats: one per index (a repeat the instrument made invalid on a busy host is re-run, not counted: issue 34).
    const counted = result.repeats.filter((r) => !r.invalid);
    assert.deepEqual(counted.map((r) => r.index).sort(), [1, 2, 3]);
    assert.equal(r1.invalid, undefined, 'a failure after the load is never the instrument\'s');
    assert.ok(!fs.existsSync(evidence('repeats/single/r1-a2')), 'no second attempt folder');
    const verdict = JSON.parse(fs.readFileSync(evidence('repeats/single/r1-a1/verdict.json'), 'utf8')) as { verdict: { passed: boolean; reasons: string[] } };
    assert.equal(verdict.verdict.passed, false);
    assert.ok(verdict.verdict.reasons.some((r) => r.startsWith('after the load: reconcile failed')));
    // N/M: M is 3 whatever failed; N counts only repeats that passed, never the one whose reconcile failed.
    const others = counted.filter((r) => r.index !== 1);
    const c = result.configurations[0];
    assert.equal(c.total, 3);
    assert.equal(c.passed, others.filter((r) => r.passed).length, JSON.stringify(others.map((r) => r.reasons)));
    assert.ok(c.passed <= 2);
    assert.equal(c.held, false);
    // The page names the real reason, and does not call the recorded FAIL a disagreement.
    const page = fs.readFileSync(evidence('report.md'), 'utf8');
    assert.match(page, /after the load: reconcile failed/);
    assert.doesNotMatch(page, /verdict\.json records FAIL, but the samples give/);
    const log = fs.readFileSync(evidence('campaign.log'), 'utf8');
    assert.match(log, /verdict +sustained single r1-a1 FAIL .*after the load: reconcile failed/);
  });

  const input: RepeatInput = {
    campaignId: id,
    rig: rigHandle(id, parseCampaignSpec(spec)),
    kind: 'sustained',
    configuration: spec.sustained!.configurations[0] as RepeatInput['configuration'],
    index: 4,
    seconds: 3,
    probe: { rate: 0, p99BudgetMs: 500 },
    driftLimit: 1.5,
    maxInFlight: 256,
  };

  await t.test('a worker lost after the load ended: the next attempt judges that load and measures nothing', async () => {
    const first = await runRepeat({ ...input, attempt: 1 });
    const dir = evidence(attemptDir(input, 1));
    // The state a worker leaves when it dies right after load.json: no reconcile.json, no verdict.json.
    fs.rmSync(path.join(dir, 'verdict.json'));
    fs.rmSync(path.join(dir, 'reconcile.json'));
    const again = await runRepeat({ ...input, attempt: 2 });
    assert.equal(again.summary.attempt, 1);
    assert.equal(again.summary.runTag, first.summary.runTag);
    assert.equal(again.summary.samples, first.summary.samples, 'the same stream, judged');
    assert.deepEqual(again.interrupted, []);
    assert.ok(fs.existsSync(path.join(dir, 'verdict.json')) && fs.existsSync(path.join(dir, 'reconcile.json')));
    assert.ok(!fs.existsSync(evidence(attemptDir(input, 2))), 'attempt 2 measured nothing');
    assert.match(fs.readFileSync(evidence('campaign.log'), 'utf8'), /single repeat 4: its load ran to its end .* judged now \(attempt 2\)/);
  });

  await t.test('judged, but the result never reached Temporal (an outage): the next attempt returns that judgement and measures nothing', async () => {
    const six = { ...input, index: 6 };
    const first = await runRepeat({ ...six, attempt: 1 });
    const verdictFile = evidence(`${attemptDir(six, 1)}/verdict.json`);
    const verdictBytes = fs.readFileSync(verdictFile, 'utf8');
    const again = await runRepeat({ ...six, attempt: 2 });
    assert.deepEqual(again.summary, first.summary, 'the same judgement, counted once');
    assert.deepEqual(again.interrupted, []);
    assert.equal(fs.readFileSync(verdictFile, 'utf8'), verdictBytes, 'verdict.json kept as written');
    assert.ok(!fs.existsSync(evidence(attemptDir(six, 2))), 'attempt 2 measured nothing');
    const log = fs.readFileSync(evidence('campaign.log'), 'utf8');
    assert.match(log, /single repeat 6: judged, but its result never reached Temporal .* counted as judged \(attempt 2\), not measured again/);
    assert.equal(log.match(/verdict +sustained single r6-a1 /g)?.length, 1, 'logged once, by the attempt that judged it');
  });

  await t.test('an earlier attempt still running in this worker (timed out by the server in an outage): the next one waits for it and counts it', async () => {
    const seven = { ...input, index: 7 };
    const first = runRepeat({ ...seven, attempt: 1 });
    // Attempt 2 arrives while attempt 1's load runs (its folder is there, nothing judged yet).
    while (!fs.existsSync(evidence(attemptDir(seven, 1)))) await new Promise((r) => setTimeout(r, 50));
    const again = await runRepeat({ ...seven, attempt: 2 });
    const one = await first;
    assert.equal(again.summary.attempt, 1, 'attempt 1 counted');
    assert.deepEqual(again.summary, one.summary);
    assert.deepEqual(again.interrupted, [], 'attempt 1 was not taken for dead');
    assert.ok(!fs.existsSync(evidence(`${attemptDir(seven, 1)}/interrupted.json`)));
    assert.ok(!fs.existsSync(evidence(attemptDir(seven, 2))), 'no second load, beside it or after it');
    assert.match(fs.readFileSync(evidence('campaign.log'), 'utf8'), /single repeat 7 \(attempt 2\): waited for repeats\/single\/r7-a1, still running in this worker/);
  });

  await t.test('a load that throws and a worker that died silently are interrupted, each with what happened', async () => {
    const five = { ...input, index: 5 };
    const nowhere = { ...five.rig, serviceUrl: `http://127.0.0.1:${await closedPort()}` };
    await assert.rejects(runRepeat({ ...five, rig: nowhere, attempt: 1 }));
    const thrown = JSON.parse(fs.readFileSync(evidence(`${attemptDir(five, 1)}/interrupted.json`), 'utf8')) as { reason: string };
    assert.match(thrown.reason, /^the load failed: ./);
    // Attempt 2's worker died before it wrote anything but its folder.
    fs.mkdirSync(evidence(attemptDir(five, 2)), { recursive: true });
    const out = await runRepeat({ ...five, attempt: 3 });
    assert.equal(out.summary.attempt, 3, 'measured again');
    assert.deepEqual(
      out.interrupted.map((i) => [i.attempt, i.reason]),
      [
        [1, thrown.reason],
        [2, HEARTBEAT_TIMEOUT],
      ],
    );
    assert.ok(fs.existsSync(evidence(`${attemptDir(five, 3)}/verdict.json`)));
  });

  await teardownRig({ campaignId: id, target: 'local', by: 'operator' });
  delete process.env.RIG_TEST_FAIL_RECONCILE_ONCE;
  await env.assertClean();
});
