// A provision of an AWS rig in its own process, for tests that kill it part-way
// (test/targets/aws/provision-killed.test.ts): `node --import tsx test/harness/provision-aws-child.ts
// CAMPAIGN EXPIRES_AT`, with the emulator's environment (RIG_AWS_ENDPOINT, AWS_REGION, credentials,
// RIG_STATE_DIR) given by the parent. It provisions examples/aws.json's rig exactly as the in-process
// call does, prints each progress line on stdout (the parent may watch them) and "provisioned" at the end.
// HOLD_AT=<regex>: once it has printed a line that matches, it holds (its event loop blocked, nothing
// more sent) until the parent kills it, so a kill "at" that line lands there on a host of any speed:
// without the hold, the next request (a RunInstances) could reach moto before the SIGKILL did.
import fs from 'node:fs';
import path from 'node:path';
import type { AwsSpec } from '../../lib/protocol/aws-spec';
import { parseCampaignSpec } from '../../lib/protocol/spec';
import { provisionAws } from '../../lib/targets/aws/provision';

const [campaignId, expiresAt] = process.argv.slice(2);
if (!campaignId || !expiresAt) {
  console.error('usage: provision-aws-child.ts CAMPAIGN EXPIRES_AT');
  process.exit(2);
}
const root = path.resolve(__dirname, '..', '..');
const spec = parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(root, 'examples', 'aws.json'), 'utf8')));

const holdAt = process.env.HOLD_AT ? new RegExp(process.env.HOLD_AT) : null;

function progress(line: string): void {
  if (!holdAt?.test(line)) {
    console.log(line);
    return;
  }
  fs.writeSync(1, `${line}\n`); // written before the hold, not buffered behind it
  // At most 2 minutes (the parent's wait is shorter): a parent gone without killing it leaves no orphan.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
  process.exit(3);
}

provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: spec.aws as AwsSpec, expiresAt } }, progress).then(
  () => console.log('provisioned'),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
