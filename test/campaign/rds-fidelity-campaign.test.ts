// Issue 23: a whole campaign on the local target in RDS-fidelity mode (local.rdsFidelity) runs every
// step against RDS's constraints: the cluster refuses plaintext and verifies with a test CA, and the
// rig's admin is not a superuser, so the roles, migrations, bring-up checks, seed, samplers,
// reconciliation, ceiling and pgbench denominator all worked over verify-full TLS and as RDS allows.
// Durations are the shortest that still run each step; nothing here judges timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { campaignEnv, tinySpec } from '../harness/campaign';

test('a local campaign in RDS-fidelity mode runs every step over TLS with a non-superuser admin, and leaves nothing behind', async () => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const spec = tinySpec({
    local: { rdsFidelity: true },
    seed: { customers: 20, historyRows: 2000 },
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 1 },
    ceiling: { workers: 2, batch: 20, seconds: 2 },
    denominator: { batch: 20, clients: 2, seconds: 2 },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'rds-fidelity', args: [spec] });
  const result = (await handle.result()) as CampaignResult;

  const steps = result.steps.map((s) => `${s.step}:${s.status}`);
  for (const s of ['clean-check', 'provision', 'bring-up', 'seed', 'sustained', 'ceiling', 'denominator', 'teardown', 'clean-check-after', 'report']) {
    assert.ok(steps.includes(`${s}:ok`), `${s} ran and was ok: ${JSON.stringify(result.steps.map((x) => [x.step, x.status, x.summary]))}`);
  }
  assert.equal(result.repeats.filter((r) => r.kind === 'sustained' && r.samples > 0 && r.reconciled).length, 1, 'the repeat was measured and reconciled');
  assert.ok(result.denominator?.legs.length && result.denominator.legs.every((l) => l.rowsVerified), 'pgbench reached the database over verify-full and its rows were counted');

  // The cluster refuses plaintext (its pg_hba.conf has hostssl lines only): no step even tried one.
  const log = fs.readFileSync(path.join(result.resultsDir, 'rig-logs', 'postgres.log'), 'utf8');
  assert.doesNotMatch(log, /no pg_hba\.conf entry/);
  await env.assertClean();
});
