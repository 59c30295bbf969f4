// A provision of an AWS rig in its own process, for tests that kill it part-way
// (test/targets/aws/provision-killed.test.ts): `node --import tsx test/harness/provision-aws-child.ts
// CAMPAIGN EXPIRES_AT`, with the emulator's environment (RIG_AWS_ENDPOINT, AWS_REGION, credentials,
// RIG_STATE_DIR) given by the parent. It provisions examples/aws.json's rig exactly as the in-process
// call does, prints each progress line on stdout (the parent may watch them) and "provisioned" at the end.
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

provisionAws(campaignId, { db: { ...spec.database }, aws: { spec: spec.aws as AwsSpec, expiresAt } }, (line) => console.log(line)).then(
  () => console.log('provisioned'),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
