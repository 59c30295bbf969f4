// npm run bench:campaign: what the orchestration itself costs, on a real dev server and the local rig.
//  1. overhead per repeat: the gap between one repeat's load ending and the next one's starting,
//     beyond the cool-down (samplers, reconciliation, verdict, workflow task, timer);   target <= 2 s
//  2. history events of a full-profile campaign (2 configurations x 5 x 10 min), alone and with two
//     variants interleaved, on the time-skipping server with stand-in activities (the events are the
//     workflow's, whatever the activities do);
//                                                                                       target <= 2,000
//  3. a worker SIGKILLed mid-repeat: time from the kill to the resumed repeat's load starting;
//                                                                                target <= heartbeat + 10 s
// Prints a table; never a pass/fail.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startCampaignServer } from '../test/harness/campaign-server';
import { PROFILES, type CampaignSpecInput } from '../lib/protocol/spec';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { toolPath } from '../lib/tools/binaries';
import { createRigWorkers } from '../worker/run-worker';
import { progressQuery, type CampaignProgress } from '../workflows/messages';
import { activityDoubles, doubleWorker } from '../test/campaign/doubles';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const root = path.resolve(__dirname, '..');
const HEARTBEAT_TIMEOUT_S = 30;

function spec(repeats: number, seconds: number, cooldown: number): CampaignSpecInput {
  return {
    name: 'bench',
    target: 'local',
    calibrate: false,
    seed: { customers: 20, historyRows: 0 },
    sustained: { repeats, repeatSeconds: seconds, cooldownSeconds: cooldown, configurations: [{ name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 1000 }] },
  };
}

function loadTimes(resultsDir: string, rel: string): { start: number; end: number } {
  const l = JSON.parse(fs.readFileSync(path.join(resultsDir, rel, 'load.json'), 'utf8')) as { started_at: string; ended_at: string };
  return { start: Date.parse(l.started_at), end: Date.parse(l.ended_at) };
}

async function waitUntil(h: WorkflowHandle, pred: (p: CampaignProgress) => boolean): Promise<void> {
  for (;;) {
    const p = await h.query(progressQuery).catch(() => undefined);
    if (p && pred(p)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function overheadPerRepeat(client: Client, address: string): Promise<{ gaps: number[]; cooldown: number }> {
  const { connection, workers } = await createRigWorkers({ env: { address, namespace: 'default' } });
  const running = Promise.all(workers.map((w) => w.run()));
  const cooldown = 2;
  try {
    const result = (await client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: `overhead-${Date.now()}`, args: [spec(5, 5, cooldown)] })) as CampaignResult;
    const times = result.repeats.sort((a, b) => a.index - b.index).map((r) => loadTimes(result.resultsDir, r.dir));
    return { gaps: times.slice(1).map((t, i) => (t.start - times[i].end) / 1000 - cooldown), cooldown };
  } finally {
    workers.forEach((w) => w.shutdown());
    await running;
    await connection.close();
  }
}

async function killToResume(client: Client, address: string): Promise<number> {
  const env = { ...process.env, TEMPORAL_ADDRESS: address };
  const start = () => spawn(process.execPath, [path.join(root, 'bin', 'rig.cjs'), 'worker'], { cwd: root, env, stdio: 'ignore' });
  let worker = start();
  const id = `kill-${Date.now()}`;
  const h = await client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec(1, 20, 0)] });
  await waitUntil(h, (p) => p.phase === 'repeat' && p.repeat?.k === 1);
  await new Promise((r) => setTimeout(r, 3000));
  const killedAt = Date.now();
  worker.kill('SIGKILL');
  worker = start();
  const result = (await h.result()) as CampaignResult;
  worker.kill('SIGTERM');
  const resumed = loadTimes(result.resultsDir, result.repeats[0].dir).start;
  return (resumed - killedAt) / 1000;
}

/**
 * The full profile with a control and one treatment interleaved (issue 13): twice the repeats, and a
 * change of variant (with its warm-up) before every one of them. The costliest shape variants allow.
 */
const FULL_INTERLEAVED: CampaignSpecInput = {
  ...PROFILES.full,
  variants: { order: 'interleaved', control: { name: 'ctl' }, treatments: [{ name: 'trt', service: { insert: 'multi-row' } }] },
};

async function historyEvents(specs: Record<string, CampaignSpecInput>): Promise<Record<string, number>> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: toolPath('temporal-test-server') } } });
  const out: Record<string, number> = {};
  try {
    for (const [id, spec] of Object.entries(specs)) {
      // runUntil shuts its worker down when the workflow ends: fresh workers for each campaign.
      const { activities, hostQueue } = activityDoubles({ dataQueue: 'rig-data-bench' });
      const workers = await Promise.all(['rig', hostQueue, 'rig-data-bench'].map((taskQueue) => doubleWorker(env.nativeConnection, taskQueue, activities)));
      await workers[0].runUntil(workers[1].runUntil(workers[2].runUntil(env.client.workflow.execute('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] }))));
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      out[id] = history.events?.length ?? 0;
    }
    return out;
  } finally {
    await env.teardown();
  }
}

async function main(): Promise<void> {
  const server = await startCampaignServer('rig-bench-campaign-');
  const { address, client } = server;
  try {
    console.error('measuring: overhead per repeat (5 repeats x 5 s, 2-s cool-downs)...');
    const o = await overheadPerRepeat(client, address);
    console.error('measuring: worker kill to resumed repeat...');
    const k = await killToResume(client, address);
    console.error('measuring: history of a full-profile campaign on the time-skipping server...');
    const events = await historyEvents({ 'full-profile': PROFILES.full, 'full-interleaved': FULL_INTERLEAVED });
    const fmt = (x: number) => x.toFixed(2);
    const rows = [
      ['orchestration overhead per repeat (s, beyond the cool-down)', `median ${fmt(median(o.gaps))}, max ${fmt(Math.max(...o.gaps))} (${o.gaps.length} gaps)`, '<= 2 s'],
      ['history events, full profile (2 configs x 5 x 10 min)', String(events['full-profile']), '<= 2,000'],
      ['history events, full profile x 2 variants interleaved (20 repeats, a change of variant and a warm-up before each)', String(events['full-interleaved']), '<= 2,000'],
      ['worker SIGKILL -> resumed repeat (s)', fmt(k), `<= ${HEARTBEAT_TIMEOUT_S + 10} s (heartbeat timeout ${HEARTBEAT_TIMEOUT_S} s + 10 s)`],
    ];
    console.log(`bench:campaign on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
    const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), ['what', 'measured', 'target'][i].length));
    console.log(['what', 'measured', 'target'].map((h, i) => h.padEnd(w[i])).join(' | '));
    console.log(w.map((n) => '-'.repeat(n)).join('-|-'));
    for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i])).join(' | '));
  } finally {
    await server.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
