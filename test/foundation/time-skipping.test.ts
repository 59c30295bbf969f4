import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { localDevEnv, timeSkippingEnv } from '../harness/temporal';
import { sleepAnHour, echo } from '../fixtures/workflows';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

test('the time-skipping server runs a workflow that sleeps for an hour without waiting for it', async () => {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'ts-test',
    workflowsPath: require.resolve('../fixtures/workflows'),
  });
  const started = process.hrtime.bigint();
  const slept = await worker.runUntil(
    env.client.workflow.execute(sleepAnHour, { taskQueue: 'ts-test', workflowId: 'sleep-an-hour' }),
  );
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  // Workflow time moved a full hour; wall time is reported, not asserted (timing belongs in benchmarks).
  assert.ok(slept >= 3_600_000, `workflow time passed: ${slept} ms`);
  console.log(`1 hour of workflow time took ${wallMs.toFixed(0)} ms of wall time`);
});

test('the dev server from the installed CLI runs a workflow through the testing harness', async () => {
  const local = await localDevEnv();
  try {
    const worker = await Worker.create({
      connection: local.nativeConnection,
      taskQueue: 'local-test',
      workflowsPath: require.resolve('../fixtures/workflows'),
    });
    const out = await worker.runUntil(local.client.workflow.execute(echo, { taskQueue: 'local-test', workflowId: 'echo-1', args: ['hi'] }));
    assert.equal(out, 'echo: hi');
  } finally {
    await local.teardown();
  }
});
