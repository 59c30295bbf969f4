// `rig worker --metrics HOST:PORT` serves the Temporal SDK's metrics for Prometheus, tagged with the
// worker's build and host; a malformed address is refused before anything connects. The worker polls
// for workflow tasks only on the shared queue `rig` (the host's and data plane's queues carry
// activities alone), which the server's own view of the queues shows.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { startCampaignServer } from '../harness/campaign-server';
import { spawnRigWorker } from '../harness/worker-process';
import { rig } from '../harness/rig-cli';
import { freePort } from '../../lib/tools/free-port';

test('rig worker --metrics serves the SDK metrics on /metrics, tagged with its build and host; workflow pollers only on rig', { timeout: 120_000 }, async () => {
  const server = await startCampaignServer('rig-worker-metrics-');
  const children = new Set<ChildProcess>();
  const env = { ...process.env, RIG_HOST: 'metrics-host', RIG_BUILD_ID: 'build-m', TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default' };
  try {
    const bad = await rig(['worker', '--metrics', 'localhost'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--metrics \(or RIG_METRICS_ADDRESS\) is 'localhost': give host:port/);

    const port = await freePort();
    await spawnRigWorker({ env, args: ['--metrics', `127.0.0.1:${port}`], children });
    let text = '';
    // The exporter reports pollers once they have polled: ask until a poller metric is there.
    for (let i = 0; i < 40 && !/temporal_num_pollers/.test(text); i++) {
      text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      if (!/temporal_num_pollers/.test(text)) await new Promise((r) => setTimeout(r, 250));
    }
    assert.match(text, /^temporal_num_pollers\{.*rig_build="build-m".*\} \d+/m);
    assert.match(text, /rig_host="metrics-host"/);

    const pollers = async (taskQueue: string) => {
      const d = await server.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 /* WORKFLOW */ });
      return d.pollers ?? [];
    };
    for (let i = 0; i < 40 && (await pollers('rig')).length === 0; i++) await new Promise((r) => setTimeout(r, 250));
    assert.ok((await pollers('rig')).length > 0, 'workflow pollers on rig');
    assert.deepEqual(await pollers('rig-host-metrics-host'), [], 'no workflow poller on the host queue');
    assert.deepEqual(await pollers('rig-data-metrics-host'), [], 'no workflow poller on the data queue');
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await server.close();
  }
});
