// The nodes' evidence reaching the control host through the campaign's bucket (lib/targets/aws/
// evidence-sync.ts), against a real moto 5.2.5 and two real results folders (a node's and the control
// host's):
// - a ship sends every file once, then only what changed; a gathering writes what the control host
//   lacks, skips what it has with the same bytes, keeps a file it has with other bytes as the node's
//   copy under nodes/<node>/ (overwriting nothing), and merges campaign.log line by line;
// - teardown gathers before it removes the bucket; when the gathering fails, everything else goes,
//   the bucket stays and the error names it, and a later teardown gathers and removes it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { awsClients, type AwsClients } from '../../../lib/targets/aws/clients';
import { gatherEvidence, missingLogLines, shipEvidence } from '../../../lib/targets/aws/evidence-sync';
import { findRigResources } from '../../../lib/targets/aws/find';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { readAwsRecord } from '../../../lib/targets/aws/record';
import { teardownAws } from '../../../lib/targets/aws/teardown';
import { exampleAws as aws, exampleSpec as spec, useMoto } from '../../harness/aws-env';

let c: AwsClients;
// RIG_STATE_DIR is the folder's state/: the results folders of the tests sit beside it.
let tmp: string;
const env = useMoto({
  prefix: 'rig-evidence-sync-',
  stateDir: 'state',
  afterStart: () => {
    tmp = env.dir;
    c = awsClients(aws.region);
  },
  beforeStop: () => c?.destroy(),
});

/** Acts as the host whose results folder is `dir` (RIG_RESULTS, as a node's or the control host's worker has it). */
function asHost(dir: string): void {
  process.env.RIG_RESULTS = dir;
}
function put(dir: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
}

test('a ship sends each file once, then what changed; a gathering writes what is missing, keeps other bytes aside, merges the log', async () => {
  const bucket = 'rig-sync-test-0123abcd-123456789012';
  await c.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const node = path.join(tmp, 'node-results');
  const control = path.join(tmp, 'control-results');
  const id = 'sync-1';
  put(node, `${id}/repeats/single/r1-a1/verdict.json`, '{"passed":true}\n');
  put(node, `${id}/campaign.json`, '{"same":"bytes"}\n');
  put(node, `${id}/rig.json`, '{"written":"on the node"}\n');
  put(node, `${id}/campaign.log`, '2026-12-01T10:00:00.000Z info       shared line\n2026-12-01T10:00:01.000Z info       database prepared on the load node\n');
  put(node, `${id}/manifest.json`, '{}\n');
  put(node, `${id}/repeats/single/r1-a1/.samples.jsonl.tmp-123-abc`, 'half a file');

  asHost(node);
  const first = await shipEvidence(c, id, { bucket, node: 'load' });
  assert.equal(first, 4, 'every file but the manifest (rebuilt at the end) and a writer\'s temporary file');
  assert.equal(await shipEvidence(c, id, { bucket, node: 'load' }), 0, 'nothing changed: nothing sent');
  put(node, `${id}/repeats/single/r2-a1/verdict.json`, '{"passed":false}\n');
  assert.equal(await shipEvidence(c, id, { bucket, node: 'load' }), 1, 'only the new file');

  put(control, `${id}/campaign.json`, '{"same":"bytes"}\n');
  put(control, `${id}/rig.json`, '{"written":"on the control host"}\n');
  put(control, `${id}/campaign.log`, '2026-12-01T09:59:00.000Z info       campaign opened\n2026-12-01T10:00:00.000Z info       shared line\n');
  asHost(control);
  const g = await gatherEvidence(c, id, { bucket });
  assert.deepEqual(g.written.sort(), ['repeats/single/r1-a1/verdict.json', 'repeats/single/r2-a1/verdict.json']);
  assert.equal(g.same, 1, 'campaign.json: the same bytes on both');
  assert.deepEqual(g.keptAside, ['nodes/load/rig.json']);
  assert.equal(fs.readFileSync(path.join(control, id, 'rig.json'), 'utf8'), '{"written":"on the control host"}\n', 'never overwritten');
  assert.equal(fs.readFileSync(path.join(control, id, 'nodes/load/rig.json'), 'utf8'), '{"written":"on the node"}\n');
  assert.equal(g.logLinesAdded, 1);
  assert.equal(
    fs.readFileSync(path.join(control, id, 'campaign.log'), 'utf8'),
    '2026-12-01T09:59:00.000Z info       campaign opened\n2026-12-01T10:00:00.000Z info       shared line\n2026-12-01T10:00:01.000Z info       database prepared on the load node\n',
  );
  assert.ok(fs.existsSync(path.join(control, id, 'nodes/load/campaign.log')), 'the node\'s whole log, kept');
  assert.ok(!fs.existsSync(path.join(control, id, 'manifest.json')));

  const again = await gatherEvidence(c, id, { bucket });
  assert.deepEqual([again.written.length, again.logLinesAdded], [0, 0], 'a second gathering finds everything in place');
  assert.deepEqual(missingLogLines('a\nb\n', 'b\nc\n\n'), ['c']);
});

test('teardown gathers before it removes the bucket; when it cannot, the bucket stays, named, and a later teardown takes it', async () => {
  const id = 'sync-keep';
  await provisionAws(id, { db: { ...spec.database }, aws: { spec: aws, expiresAt: new Date(Date.now() + 3600_000).toISOString() } }, () => {}, { pkg: { tarball: Buffer.from('pkg'), lock: Buffer.from('{}'), sha256: 'a'.repeat(64) } });
  const bucket = readAwsRecord(id)!.bootstrap!.bucket;
  await c.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `evidence/${id}/load/repeats/single/r1-a1/verdict.json`, Body: '{"passed":true}\n' }));
  const control = path.join(tmp, 'control-keep');
  asHost(control);
  // The control host cannot write its results folder: the campaign's folder is a file.
  put(control, id, 'not a folder');

  await assert.rejects(teardownAws(id), new RegExp(`everything removed but the artifacts bucket ${bucket}, kept because the nodes' evidence in it could not be gathered`));
  assert.deepEqual((await findRigResources(c, id)).map((r) => r.kind), ['artifacts-bucket'], 'billing stopped; only the bucket with the evidence stays');

  fs.rmSync(path.join(control, id));
  const down = await teardownAws(id);
  assert.deepEqual(down.removed, [`artifacts-bucket ${bucket}`]);
  assert.match(down.keptLogs?.join(' ') ?? '', /the nodes' evidence: 1 file\(s\) brought here/);
  assert.equal(fs.readFileSync(path.join(control, id, 'repeats/single/r1-a1/verdict.json'), 'utf8'), '{"passed":true}\n');
  assert.deepEqual(await findRigResources(c, id), []);
});
