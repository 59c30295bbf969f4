// MUST SHOW of issue 37 on the aws target: a campaign with `load.nodes: 2`, the whole of it against a
// real moto 5.2.5 with IAM enforced and a real Temporal dev server, in the harness of
// aws-campaign.test.ts (test/harness/aws-campaign.ts: the control host's worker in this process as the
// documented policies' user; each node's worker a `rig worker --task-queue Q` child with its own state
// and results folders, as the user holding the policy provisioning put on the nodes' role; a local
// PostgreSQL cluster standing in for RDS).
//
// Shown: provisioning launches both load nodes (the rig's own, node 0, whose worker serves the data
// plane, and node 1, tagged rig:load-node=1, its worker on its own queue), both of aws.load's type;
// the repeat is sent from both, each node reading its clock against the time server the nodes share
// (on AWS the Amazon Time Sync Service; here a server on this machine, RIG_AWS_TIME_SYNC); node 1's
// stream reaches the data plane only through the bucket (its folder is its own), where the judge
// fetches it under the policy's new statement; the merged repeat is judged and reconciled over both
// nodes' run tags; teardown terminates both (by tag) and leaves nothing; the cost counts both (the
// instances, their addresses and root volumes) on the page.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import type { NodeLoadFile } from '../../activities/node-repeat';
import { startNtpServer, type NtpServer } from '../../lib/loadgen/ntp-clock';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { countedRepeats } from '../../lib/protocol/repeat-validity';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { awsCampaignCost } from '../../lib/targets/aws/campaign-cost';
import { rigCost } from '../../lib/targets/aws/cost';
import { EMULATOR_MAP_ENV } from '../../lib/targets/aws/emulator-map';
import { TIME_SYNC_ENV } from '../../lib/targets/aws/load-nodes';
import { CAMPAIGN_TAG, LOAD_NODE_TAG, RESOURCE_TAG, rigNames } from '../../lib/targets/aws/names';
import { awsAppQueue, awsDataQueue, awsLoadNodeQueue } from '../../lib/temporal/queues';
import { exampleInput, standInDatabase, useMoto } from '../harness/aws-env';
import { campaignEnv, saveHistory, tinySpec } from '../harness/campaign';
import { campaignIdentities, grantNodePolicy, MOTO_ACCOUNT, nodeFolders, nodeWorker, rigResourcesAs, withClientsAs, type CampaignIdentities } from '../harness/aws-campaign';
import type { PolicyStatement } from '../harness/iam-enforced';

const awsBlock = exampleInput.aws!;
let who: CampaignIdentities;
let ntp: NtpServer | undefined;
const moto = useMoto({
  stateDir: false,
  clearEnv: [EMULATOR_MAP_ENV, TIME_SYNC_ENV],
  afterStart: async () => {
    who = await moto.withClients((c) => campaignIdentities(c, moto.endpoint));
    Object.assign(process.env, who.control);
  },
});

const children = new Set<ChildProcess>();
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await ntp?.close();
});

test('load.nodes 2 on aws: both load nodes launched and sending their shares from their own workers, judged as one, both torn down, both in the cost', async (t) => {
  const id = 'aws-nodes-2';
  const { map } = await standInDatabase();
  const appFolders = nodeFolders('app');
  // The time server every node reads (what Amazon Time Sync is to them on AWS): the control host's
  // worker names it in the nodes' handles (lib/targets/aws/load-nodes.ts timeSyncUrl).
  ntp = await startNtpServer();
  // A test-only switch, honoured only under RIG_TESTING=1 (lib/tools/test-switch.ts): `npm test` sets it, and so does this file, run alone.
  process.env.RIG_TESTING = '1';
  process.env[TIME_SYNC_ENV] = ntp.url.slice('ntp://'.length);
  const env = await campaignEnv();
  process.env[EMULATOR_MAP_ENV] = JSON.stringify({ ...map, appNodeStateDir: appFolders.stateDir });
  await env.inProcessWorker();
  const nodeEnv = { ...env.childEnv, ...who.node, [EMULATOR_MAP_ENV]: JSON.stringify(map), RIG_AWS_ARTIFACTS_BUCKET: rigNames(id).artifactsBucket(MOTO_ACCOUNT) };
  const spec = tinySpec({ target: 'aws', aws: awsBlock, load: { nodes: 2 }, sustained: { ...tinySpec().sustained!, repeats: 1, cooldownSeconds: 0 } });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [spec] });
  // The nodes boot once provisioning launched them, with their role's policy in place (as in aws-campaign.test.ts).
  const nodePolicy = await grantNodePolicy(who.admin, moto.region, moto.endpoint, handle);
  const [load, load1] = await Promise.all([
    nodeWorker('load', awsDataQueue(id), nodeEnv, children),
    nodeWorker('load-n1', awsLoadNodeQueue(id, 1), nodeEnv, children),
    nodeWorker('app', awsAppQueue(id), nodeEnv, children, appFolders),
  ]);
  const result = (await handle.result()) as CampaignResult;
  for (const s of result.steps) t.diagnostic(`${s.step} ${s.status}: ${s.summary.slice(0, 160)}`);
  for (const r of result.repeats) t.diagnostic(`repeat ${r.index} attempt ${r.attempt}: ${r.passed ? 'PASS' : 'FAIL'} ${r.reasons.join('; ')}`);

  for (const s of ['provision', 'database', 'prepare', 'service', 'bring-up', 'seed', 'load-nodes', 'sustained', 'teardown', 'clean-check-after', 'report']) {
    assert.ok(result.steps.some((x) => x.step === s && x.status === 'ok'), `${s} ran and was ok: ${JSON.stringify(result.steps.map((x) => [x.step, x.status, x.summary]))}`);
  }
  // Uncalibrated (no calibration asked); not judged only if this shared host's generator ran late twice.
  assert.ok(['uncalibrated', 'not-judged'].includes(result.status), `${result.status}: ${result.error ?? ''}`);

  // Both launched, of the load node's type: the rig's own (node 0) and node 1 by its tag and Name.
  const instances = await withClientsAs(who.admin, moto.region, moto.endpoint, async (c) =>
    ((await c.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: `tag:${CAMPAIGN_TAG}`, Values: [id] }] }))).Reservations ?? []).flatMap((r) => r.Instances ?? []),
  );
  const tag = (i: (typeof instances)[number], key: string) => i.Tags?.find((x) => x.Key === key)?.Value;
  const loadNodes = instances.filter((i) => tag(i, RESOURCE_TAG) === 'load-node');
  assert.deepEqual(loadNodes.map((i) => [tag(i, 'Name'), tag(i, LOAD_NODE_TAG) ?? null, i.InstanceType]).sort(), [
    [rigNames(id).loadNode, null, awsBlock.load.instanceType],
    [rigNames(id).extraLoadNode(1).name, '1', awsBlock.load.instanceType],
  ].sort(), 'two load nodes launched, once each');
  // ... and both torn down: terminated, and nothing of the rig found by its tags.
  assert.deepEqual(instances.map((i) => i.State?.Name), instances.map(() => 'terminated'));
  assert.equal(instances.length, 3, 'the app node and the two load nodes');
  assert.deepEqual(await rigResourcesAs(who.admin, moto.region, moto.endpoint, id), []);

  // The repeat from both nodes: each one's stream written in its own worker's folder, node 1's fetched
  // by the data plane (the load node) through the bucket, every one gathered to the control host.
  // The repeat's last judged attempt (an invalid one on this host's account is run again, issue 34).
  const judged = result.repeats.at(-1)!;
  assert.ok(judged && countedRepeats(result.repeats).length <= 1, JSON.stringify(result.repeats));
  const rel = path.join('repeats', judged.configuration, `r${judged.index}-a${judged.attempt}`);
  const at = (root: string, ...p: string[]) => path.join(root, id, rel, ...p);
  assert.ok(fs.existsSync(at(load.resultsDir, 'nodes', 'n0', 'samples.csv.gz')) && !fs.existsSync(at(load1.resultsDir, 'nodes', 'n0', 'samples.csv.gz')), 'node 0 sent from the load node');
  assert.ok(fs.existsSync(at(load1.resultsDir, 'nodes', 'n1', 'samples.csv.gz')), 'node 1 sent from its own worker');
  assert.ok(fs.existsSync(at(load.resultsDir, 'nodes', 'n1', 'samples.csv.gz')), "node 1's stream reached the data plane through the bucket");
  const nodes = [0, 1].map((i) => JSON.parse(fs.readFileSync(path.join(result.resultsDir, rel, 'nodes', `n${i}`, 'node.json'), 'utf8')) as NodeLoadFile);
  assert.deepEqual(nodes.map((n) => [n.node, n.nodes]), [[0, 2], [1, 2]]);
  assert.equal(new Set(nodes.map((n) => n.start_at_ms)).size, 1, 'one start instant');
  for (const n of nodes) assert.ok(n.clock && n.clock.exchanges === 8 && n.clock.reference === ntp.url, `node ${n.node} read its clock against the shared time server: ${JSON.stringify(n.clock)}`);
  const verdict = JSON.parse(fs.readFileSync(path.join(result.resultsDir, rel, 'verdict.json'), 'utf8')) as { plan: { nodes?: number }; delivery: { scheduled: number } };
  assert.equal(verdict.plan.nodes, 2);
  assert.equal(verdict.delivery.scheduled, 200 * 6, 'the whole schedule, merged from the two shares');
  const rec = JSON.parse(fs.readFileSync(path.join(result.resultsDir, rel, 'reconcile.json'), 'utf8')) as { nodes: Array<{ run_tag: string }> };
  assert.deepEqual(rec.nodes.map((n) => n.run_tag), nodes.map((n) => n.run_tag), 'reconciled over both nodes\' run tags');
  // The data plane read node 1's stream under its own statement, the campaign's evidence prefix only.
  const read = nodePolicy.Statement.find((s: PolicyStatement) => s.Sid === 'ReadTheLoadNodesEvidence');
  assert.deepEqual(read?.Resource, `arn:aws:s3:::${rigNames(id).artifactsBucket(MOTO_ACCOUNT)}/evidence/${id}/*`);

  // Both in the cost: the instances, their addresses and root volumes, on the page as provisioning kept them.
  const parsed = parseCampaignSpec(spec);
  const two = awsCampaignCost({ ...parsed, aws: parsed.aws! });
  const one = awsCampaignCost({ ...parsed, aws: parsed.aws!, load: { nodes: 1 } });
  const loadPrice = rigCost(parsed.aws!).items.find((i) => i.what.startsWith('load node'))!.perHour;
  assert.ok(two.perHour! > one.perHour! + loadPrice, `${two.perHour} counts a second load node over ${one.perHour}`);
  const page = fs.readFileSync(path.join(result.resultsDir, 'report.md'), 'utf8');
  assert.ok(page.includes(`at $${two.perHour!.toFixed(4)}/hour`), `the page's rate is the two-node rig's $${two.perHour!.toFixed(4)}/hour`);
  assert.match(page, /it covers the RDS instance, its gp3 storage, the app node and the 2 load nodes, their public IPv4 addresses and root volumes/);
  assert.match(page, /3 public IPv4 addresses \(one per node\)/);
  assert.match(page, /3 node root volumes \(gp3 \d+ GB each\)/);
  assert.match(page, /load 2 x c7g\.2xlarge/);

  await env.assertClean();
  // The path recorded and replayed against the code that made it (test/harness/recorded-replay.ts).
  await saveHistory(env.address, id);
});
