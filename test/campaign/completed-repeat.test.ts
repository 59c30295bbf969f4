// A completed measurement is a result; only an interrupted one is re-run (activities/repeat.ts).
//
// 1. A real campaign of 2 repeats on the local rig whose first reconciliation throws once (the test
//    hook RIG_TEST_FAIL_RECONCILE_ONCE): that repeat is FAIL with the reason, it is not measured again,
//    and it counts in M: the configuration reads N/2 with N the repeats that passed (1/2 on a rig that
//    held the other one), never 2/2.
// 2. On the rig it kept, runRepeat called directly as `rig step` does:
//    - a worker lost after the load ended and before the verdict: the next attempt judges that
//      attempt's stream, under its run tag, and measures nothing;
//    - judged but never delivered (a Temporal outage): the next attempt returns that judgement;
//    - still running in this worker when the next attempt comes (the server timed it out in an
//      outage and answered its heartbeat NotFound): its load goes on while its campaign runs, and the
//      next attempt waits for it and counts it, no second load; a NotFound from a closed campaign
//      stops the load; the next attempt cancelled while it waits stops the earlier load too;
//    - a load that throws is interrupted with the error text; a folder left without a word is a
//      heartbeat timeout; the attempt after them measures and lists both.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { ActivityCancellationDetails, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { HEARTBEAT_TIMEOUT, attemptDir, runRepeat } from '../../activities/repeat';
import { rigHandle, teardownRig } from '../../activities/rig-lifecycle';
import type { RepeatInput, RepeatOutput } from '../../activities/contract';
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
  // 6-s repeats at 200 requests/s: 1,200 samples, over the gate's 1,000, so the repeat that reconciled can pass.
  const spec = tinySpec({ end: 'keep', sustained: { ...tinySpec().sustained!, repeats: 2, warmupSeconds: 0, cooldownSeconds: 1 } });
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
    assert.deepEqual(counted.map((r) => r.index).sort(), [1, 2]);
    assert.equal(r1.invalid, undefined, 'a failure after the load is never the instrument\'s');
    assert.ok(!fs.existsSync(evidence('repeats/single/r1-a2')), 'no second attempt folder');
    const verdict = JSON.parse(fs.readFileSync(evidence('repeats/single/r1-a1/verdict.json'), 'utf8')) as { verdict: { passed: boolean; reasons: string[] } };
    assert.equal(verdict.verdict.passed, false);
    assert.ok(verdict.verdict.reasons.some((r) => r.startsWith('after the load: reconcile failed')));
    // N/M: M is 2 whatever failed; N counts only repeats that passed, never the one whose reconcile failed.
    const others = counted.filter((r) => r.index !== 1);
    const c = result.configurations[0];
    assert.equal(c.total, 2);
    assert.equal(c.passed, others.filter((r) => r.passed).length, JSON.stringify(others.map((r) => r.reasons)));
    assert.ok(c.passed <= 1);
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

  // Attempt 1 as the worker runs it (an activity context, the worker's client): the server answers its
  // heartbeat NotFound once it timed it out in an outage. Attempt 2 starts meanwhile in the same worker.
  const attemptOne = async (index: number, workflowId: string) => {
    const wf = await env.client.workflow.getHandle(workflowId).describe();
    const ctx = new MockActivityEnvironment({ attempt: 1, workflowExecution: { workflowId: wf.workflowId, runId: wf.runId } }, { client: env.client });
    // Its load is running: the generator's first second is in a heartbeat.
    const underLoad = new Promise<void>((resolve) => ctx.on('heartbeat', (d: { second?: number }) => d?.second !== undefined && resolve()));
    const run = ctx.run(runRepeat, { ...input, index }) as Promise<RepeatOutput>;
    await Promise.race([underLoad, run.then(() => undefined, () => undefined)]); // an attempt that failed first fails below
    ctx.cancel('NOT_FOUND', new ActivityCancellationDetails({ notFound: true }));
    return { ctx, run: run.then((v) => ({ ok: v }), (err: unknown) => ({ err })) };
  };

  await t.test('timed out by the server in an outage, its campaign still running: its load goes on, and the next attempt waits for it and counts it', async () => {
    const seven = { ...input, index: 7 };
    // The kept rig's watchdog is a workflow that runs on (the campaign itself has closed).
    const one = await attemptOne(7, `${id}.watchdog`);
    const again = await runRepeat({ ...seven, attempt: 2 });
    const first = await one.run;
    assert.ok('ok' in first, `attempt 1 ran to its end: ${'err' in first ? String(first.err) : ''}`);
    assert.equal(again.summary.attempt, 1, 'attempt 1 counted');
    assert.deepEqual(again.summary, first.ok.summary);
    assert.equal(again.summary.cutShort, false);
    assert.deepEqual(again.interrupted, [], 'attempt 1 was not taken for dead');
    assert.ok(!fs.existsSync(evidence(`${attemptDir(seven, 1)}/interrupted.json`)));
    assert.ok(!fs.existsSync(evidence(attemptDir(seven, 2))), 'no second load, beside it or after it');
    assert.match(fs.readFileSync(evidence('campaign.log'), 'utf8'), /single repeat 7 \(attempt 2\): waited for repeats\/single\/r7-a1, still running in this worker/);
  });

  await t.test('NotFound because its campaign has closed: the load stops, recorded as cancelled', async () => {
    const eight = { ...input, index: 8 };
    const one = await attemptOne(8, id);
    const first = await one.run;
    assert.ok('err' in first && first.err instanceof CancelledFailure, 'cancelled');
    const marker = JSON.parse(fs.readFileSync(evidence(`${attemptDir(eight, 1)}/interrupted.json`), 'utf8')) as { reason: string };
    assert.equal(marker.reason, 'cancelled');
  });

  await t.test('the next attempt cancelled while it waits: the earlier load stops too, and both say cancelled', async () => {
    const nine = { ...input, index: 9 };
    const one = await attemptOne(9, `${id}.watchdog`);
    const two = new MockActivityEnvironment({ attempt: 2 });
    // Its first heartbeat says it waits for attempt 1.
    const waitsFor = once(two, 'heartbeat');
    const waiting = two.run(runRepeat, nine);
    assert.deepEqual((await waitsFor)[0], { waitingFor: 'repeats/single/r9-a1', phase: 'an earlier attempt still running here' });
    two.cancel('CANCELLED');
    await assert.rejects(waiting, CancelledFailure);
    const first = await one.run;
    assert.ok('err' in first && first.err instanceof CancelledFailure, 'attempt 1 stopped');
    const marker = JSON.parse(fs.readFileSync(evidence(`${attemptDir(nine, 1)}/interrupted.json`), 'utf8')) as { reason: string };
    assert.equal(marker.reason, 'cancelled');
    assert.ok(!fs.existsSync(evidence(attemptDir(nine, 2))), 'attempt 2 measured nothing');
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
