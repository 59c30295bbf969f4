// examples/tenants.json's configuration (10 tenants, Zipf s=1.1, 5 % duplicates; issue 35, item 2) on a
// real local rig (a PostgreSQL cluster and the reference service), one short repeat through the repeat
// activity: the other nine tenants are made with their own keys, customers and meter; every repeat of
// an earlier key reconciles to the unique events (rows == unique events, Σ quantity over them), each
// tenant's rows in the database are exactly its unique events by the plan's draw; and the page has a
// p99 for each tenant.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { bringUp } from '../../activities/bringup';
import { runRepeat } from '../../activities/repeat';
import { campaignDir, VERDICT } from '../../lib/evidence/layout';
import { buildReport, renderMarkdown } from '../../lib/evidence/report';
import { EvidenceStore } from '../../lib/evidence/store';
import { readSampleFile } from '../../lib/loadgen/sample-reader';
import type { RigHandle } from '../../lib/protocol/campaign-result';
import { planClients } from '../../lib/protocol/clients-analysis';
import type { RunReport } from '../../lib/protocol/run-report';
import { INGEST, isOk } from '../../lib/protocol/sample-row';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { scheduleIndex, requestRate } from '../../lib/protocol/stream-plan';
import { withClient } from '../../lib/targets/db';
import { rigDbUrls } from '../../lib/targets/local/connection';
import { provisionLocal } from '../../lib/targets/local/provision';
import { tenantName } from '../../lib/targets/tenant-fixtures';
import { isolatedStateDir, testCampaign } from '../harness/local-rig';

isolatedStateDir();
const campaign = testCampaign('tenants');
let rig: RigHandle;
const example = parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'tenants.json'), 'utf8')));
const configuration = example.sustained!.configurations[0];
const SECONDS = 6;

before(async () => {
  const p = await provisionLocal(campaign, {});
  rig = { campaignId: campaign, target: 'local', dataQueue: 'unused', serviceUrl: p.serviceUrl, database: '', rigDir: '', hardware: 'test', parameters: {} };
  await bringUp({ campaignId: campaign, rig, customers: 20 });
});

test('10 tenants, Zipf s=1.1, 5 % duplicates: the repeat reconciles to the unique events, per tenant too, and the page has each tenant\'s p99', async () => {
  assert.deepEqual(configuration.workload, { tenants: { count: 10, s: 1.1 }, duplicates: { share: 0.05, mode: 'random' } });
  // The example's configuration as it is, for a short repeat; a limit no machine's timing crosses (this is about counting).
  const cfg = { ...configuration, p99LimitMs: 60_000 };
  const rep = await runRepeat({ campaignId: campaign, rig, kind: 'sustained', configuration: cfg, index: 1, seconds: SECONDS, probe: { rate: 0, p99BudgetMs: 500 }, driftLimit: 1000, maxInFlight: 256 });
  const dir = path.join(campaignDir(campaign), rep.summary.dir);
  const report = JSON.parse(fs.readFileSync(path.join(dir, VERDICT), 'utf8')) as RunReport;
  assert.equal(report.failed, 0, `${report.failed} requests failed`);
  assert.ok(report.clients, 'the report counts the clients');
  assert.ok(report.clients.repeats > 0, `${report.clients.repeats} requests repeated an earlier key`);
  assert.equal(report.events_claimed, report.clients.unique_events);
  assert.equal(rep.summary.reconciled, true, 'rows written == unique events and Σ quantity over them');
  assert.equal(report.gate.checks.find((c) => c.name === 'rows')?.passed, true, report.gate.checks.find((c) => c.name === 'rows')?.detail);
  assert.equal(report.gate.checks.find((c) => c.name === 'quantity')?.passed, true, report.gate.checks.find((c) => c.name === 'quantity')?.detail);

  // Each tenant's rows in the database: exactly the unique events the plan's draw gave it.
  const cols = await readSampleFile(path.join(dir, 'samples.csv.gz'));
  const plan = cols.plan!;
  assert.equal(plan.tenants?.count, 10);
  const map = planClients(plan)!;
  const want = new Array<number>(10).fill(0);
  const seen = new Set<number>();
  for (let i = 0; i < cols.length; i++) {
    if (cols.scenario[i] !== INGEST || !isOk(cols.status[i])) continue;
    const o = map.originalOf(scheduleIndex(requestRate(plan), cols.intended[i]));
    if (seen.has(o)) continue;
    seen.add(o);
    want[map.tenantOf(o)] += cols.events[i];
  }
  assert.equal(report.events_claimed, want.reduce((a, b) => a + b, 0), 'events claimed are the unique ones: each original once');
  assert.ok(report.events_claimed < report.ok * configuration.batch, 'fewer than every acknowledged event: the repeats are not counted again');
  const got = await withClient(rigDbUrls(campaign).ownerUrl, async (c) => {
    const r = await c.query<{ name: string; n: string }>(
      `SELECT t.name, count(*)::text AS n FROM usage_events e JOIN tenants t ON t.id = e.tenant_id WHERE e.properties @> $1::jsonb GROUP BY t.name`,
      [JSON.stringify({ rig_run: rep.summary.runTag })],
    );
    return new Map(r.rows.map((x) => [x.name, Number(x.n)]));
  });
  const names = ['rig-bench', ...Array.from({ length: 9 }, (_, i) => tenantName(i + 2))];
  assert.deepEqual(
    names.map((n) => got.get(n) ?? 0),
    want,
    'rows per tenant == its unique events',
  );
  assert.ok(want[0] > want[9], 'tenant 1 is the hottest');

  // The page: a p99 for each of the 10 tenants.
  const store = EvidenceStore.forCampaign(campaign);
  store.writeJson('spec.json', { ...example, sustained: { ...example.sustained, repeats: 1, repeatSeconds: SECONDS, configurations: [cfg] } });
  await store.buildManifest();
  const md = renderMarkdown(await buildReport(campaignDir(campaign)));
  const at = md.indexOf(`#### ${configuration.name}: p99 per tenant`);
  assert.ok(at >= 0, 'the page has the table of each tenant\'s p99');
  const section = md.slice(at + 1);
  const rows = section
    .slice(0, section.indexOf('\n#'))
    .split('\n')
    .filter((l) => /^\| \d+ \|/.test(l));
  assert.equal(rows.length, 10, rows.join('\n'));
  for (const r of rows.slice(0, 10)) assert.match(r, /\| [\d.,]+ ms \|$/, `a p99 for each tenant: ${r}`);
});
