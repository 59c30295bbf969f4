// The rig end to end through a Temporal-Cloud-shaped front (test/harness/cloud-front.ts: TLS on the
// namespace's own endpoint name, an API key required, the OperatorService refused with
// PERMISSION_DENIED) in front of a dev server that has the rig's search attributes:
// - `rig schedule create` and `trigger`, the worker (its native connection) and `rig campaign list`
//   all reach it by TEMPORAL_* variables alone, every call with TLS, the endpoint's SNI and the key;
// - the campaign finds its search attributes without the OperatorService, so it sets RigStatus,
//   RigStep and RigCampaign, and the second scheduled run finds the first as its baseline (the
//   `RigStatus = 'held'`-style visibility query) and sets RigRegressed;
// - a trigger while a run is still going is dropped by the SKIP overlap policy, and says so;
// - `rig history weekly -o json` (issue 36) finds the schedule's runs by visibility through the front,
//   each named by the build of the unversioned worker that ran it (rig.json: visibility has none).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { temporalEnv } from '../../lib/temporal/connection-env';
import { createRigWorkers } from '../../worker/run-worker';
import { campaignEnv, tinySpec } from '../harness/campaign';
import { startCloudFront } from '../harness/cloud-front';
import { rig } from '../harness/rig-cli';

test('a scheduled campaign through a Cloud-shaped front sets its search attributes and finds its baseline', async () => {
  const env = await campaignEnv();
  const front = await startCloudFront({ upstream: env.address });
  after(() => front.stop());
  const cli = { ...env.childEnv, ...front.env() };
  const { connection, workers } = await createRigWorkers({ env: temporalEnv(front.env()) });
  const running = Promise.all(workers.map((w) => w.run()));
  try {
    const specFile = path.join(env.dir, 'weekly.json');
    fs.writeFileSync(specFile, JSON.stringify(tinySpec({ name: 'weekly', sustained: { ...tinySpec().sustained!, repeats: 1, cooldownSeconds: 0, warmupSeconds: 0, driftLimit: 100 } })));
    const created = await rig(['schedule', 'create', 'weekly', specFile, '--cron', '0 3 * * 1'], cli);
    assert.equal(created.code, 0, created.stderr);
    assert.doesNotMatch(created.stderr, /lacks|could not/, 'the search attributes are found without the OperatorService');

    const runs: string[] = [];
    const results: CampaignResult[] = [];
    for (const n of [1, 2]) {
      const triggered = await rig(['schedule', 'trigger', 'weekly'], cli);
      assert.equal(triggered.code, 0, triggered.stderr);
      const id = /started campaign (\S+)/.exec(triggered.stdout)?.[1];
      assert.ok(id && !runs.includes(id), triggered.stdout);
      runs.push(id);
      if (n === 1) {
        // A run is going: another trigger is dropped by the overlap policy, and the command says so.
        const dropped = await rig(['schedule', 'trigger', 'weekly'], cli);
        assert.equal(dropped.code, 1, dropped.stdout);
        assert.match(dropped.stderr, new RegExp(`overlap policy \\(SKIP\\) dropped the run: ${id} is still running`));
      }
      results.push((await env.client.workflow.getHandle(id).result()) as CampaignResult);
    }
    const [first, second] = results;
    assert.equal(first.status, 'uncalibrated', JSON.stringify({ error: first.error, repeats: first.repeats.map((r) => r.reasons) }));
    const d1 = await env.client.workflow.getHandle(runs[0]).describe();
    assert.deepEqual(d1.searchAttributes?.RigStatus, [first.status]);
    assert.equal((d1.searchAttributes?.RigCampaign as string[] | undefined)?.[0], path.basename(first.resultsDir));
    assert.ok((d1.searchAttributes?.RigStep as string[] | undefined)?.length, 'RigStep set');
    const baseline = JSON.parse(fs.readFileSync(path.join(second.resultsDir, 'baseline.json'), 'utf8')) as { baseline_workflow_id: string };
    assert.equal(baseline.baseline_workflow_id, runs[0], 'the second run found the first by RigStatus');
    const regressed = (await env.client.workflow.getHandle(runs[1]).describe()).searchAttributes?.RigRegressed as string[] | undefined;
    assert.ok(regressed?.[0] === 'yes' || regressed?.[0] === 'no', `RigRegressed set: ${String(regressed)}`);

    const listed = await rig(['campaign', 'list', '-o', 'json'], cli);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; status: string }>;
    assert.deepEqual(runs.map((id) => rows.find((r) => r.id === id)?.status), [first.status, second.status], listed.stdout);

    // rig history -o json through the front: the runs from visibility (a ListWorkflowExecutions the
    // front forwarded), their figures from the folders, each with its worker's build.
    const callsBefore = front.calls.length;
    const history = await rig(['history', 'weekly', '-o', 'json'], cli);
    assert.equal(history.code, 0, history.stderr);
    const h = JSON.parse(history.stdout) as { notes: string[]; missing: string[]; series: Array<{ series: string; rows: Array<{ campaignId: string; build: string | null }> }> };
    assert.ok(h.notes.includes(`visibility on ${front.address}: 2 run(s) of schedule weekly`), h.notes.join('\n'));
    assert.deepEqual(h.missing, []);
    const series = h.series.find((x) => x.series.startsWith('single'))!;
    assert.deepEqual(series.rows.map((r) => r.campaignId), results.map((r) => path.basename(r.resultsDir)));
    const rigBuilds = results.map((r) => (JSON.parse(fs.readFileSync(path.join(r.resultsDir, 'rig.json'), 'utf8')) as { rigBuild?: string }).rigBuild);
    assert.ok(rigBuilds.every((b) => typeof b === 'string' && /^[A-Za-z0-9._+-]+$/.test(b)), `rig.json names the worker's build: ${rigBuilds.join(', ')}`);
    assert.deepEqual(series.rows.map((r) => r.build), rigBuilds);
    assert.ok(front.calls.slice(callsBefore).some((c) => c.path.endsWith('/ListWorkflowExecutions') && c.refused === undefined && c.apiKey === 'valid'), 'the history asked visibility through the front');
  } finally {
    workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
    await running.catch(() => undefined);
    await connection.close().catch(() => undefined);
  }

  // What arrived at the front: TLS by h2 on the endpoint's name with the key, from the CLI's client
  // and the worker's core alike; the OperatorService refused each time it was asked.
  assert.deepEqual(front.handshakeFailures, []);
  const clients = new Set(front.calls.map((c) => c.client.split(/[/ ]/)[0]));
  assert.ok(clients.has('grpc-node-js') && [...clients].some((c) => c.startsWith('temporal-core') || c.startsWith('tonic')), [...clients].join(', '));
  for (const c of front.calls) assert.deepEqual([c.sni, c.alpn, c.apiKey], [front.serverName, 'h2', 'valid'], JSON.stringify(c));
  const operator = front.calls.filter((c) => c.path.includes('OperatorService'));
  assert.ok(operator.length >= 3 && operator.every((c) => c.refused === 7), JSON.stringify(operator));
  assert.ok(front.calls.some((c) => c.path.endsWith('/CountWorkflowExecutions') && c.refused === undefined));
});
