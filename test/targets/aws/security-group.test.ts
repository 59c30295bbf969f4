// InvalidGroup.NotFound right after CreateSecurityGroup is EC2 catching up with itself, not a missing
// group (security-group.ts): AuthorizeSecurityGroupIngress is tried again, through the real AWS SDK,
// against a loopback HTTP server that answers the first call with EC2's own error document (moto knows
// every group the moment it is made and never answers "not yet"), and the classification alone: only
// that error is retried, a duplicate rule is done, anything else is thrown as it is.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { AuthorizeSecurityGroupIngressCommand, EC2Client } from '@aws-sdk/client-ec2';
import { authorizeIngress, GROUP_NOT_KNOWN_YET } from '../../../lib/targets/aws/security-group';

const fast = { firstDelayMs: 1 };
const perm = { IpProtocol: 'tcp', FromPort: 5432, ToPort: 5432, UserIdGroupPairs: [{ GroupId: 'sg-0nodes' }] };
const named = (name: string, message: string) => Object.assign(new Error(message), { name });

function ec2Failing(...errors: Error[]) {
  const calls: unknown[] = [];
  return {
    calls,
    send: async (cmd: AuthorizeSecurityGroupIngressCommand) => {
      calls.push(cmd.input);
      const err = errors[calls.length - 1];
      if (err) throw err;
      return {};
    },
  };
}

test('InvalidGroup.NotFound is retried until EC2 knows the group; a duplicate rule is done; another error is thrown at once', async () => {
  const progress: string[] = [];
  const late = ec2Failing(named(GROUP_NOT_KNOWN_YET, "The security group 'sg-0db' does not exist"), named(GROUP_NOT_KNOWN_YET, "The security group 'sg-0db' does not exist"));
  await authorizeIngress(late, 'sg-0db', perm, (l) => progress.push(l), fast);
  assert.equal(late.calls.length, 3);
  assert.match(progress[0]!, /opening 5432\/tcp on sg-0db: InvalidGroup\.NotFound, not consistent yet/);

  const dup = ec2Failing(named('InvalidPermission.Duplicate', 'the specified rule already exists'));
  await authorizeIngress(dup, 'sg-0db', perm, () => {}, fast);
  assert.equal(dup.calls.length, 1);

  const denied = ec2Failing(named('UnauthorizedOperation', 'You are not authorized to perform this operation.'));
  await assert.rejects(authorizeIngress(denied, 'sg-0db', perm, () => {}, fast), { name: 'UnauthorizedOperation' });
  assert.equal(denied.calls.length, 1);
});

test('through the AWS SDK: EC2 answers InvalidGroup.NotFound once, the rule is added on the next call', async () => {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.setHeader('content-type', 'text/xml;charset=UTF-8');
      if (bodies.length === 1) {
        // EC2's error document (EC2 API reference, "Error codes": Response/Errors/Error, HTTP 400).
        res.statusCode = 400;
        res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>InvalidGroup.NotFound</Code><Message>The security group 'sg-0db' does not exist</Message></Error></Errors><RequestID>4b1d0e3a-0000-0000-0000-000000000001</RequestID></Response>`);
        return;
      }
      res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<AuthorizeSecurityGroupIngressResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>4b1d0e3a-0000-0000-0000-000000000002</requestId><return>true</return></AuthorizeSecurityGroupIngressResponse>`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const ec2 = new EC2Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' }, maxAttempts: 1 });
  try {
    const progress: string[] = [];
    await authorizeIngress(ec2, 'sg-0db', perm, (l) => progress.push(l), fast);
    assert.equal(bodies.length, 2, 'one refused call, one that added the rule');
    assert.match(bodies[1]!, /Action=AuthorizeSecurityGroupIngress/);
    assert.match(bodies[1]!, /GroupId=sg-0db/);
    assert.match(progress.join('\n'), /InvalidGroup\.NotFound, not consistent yet/);
  } finally {
    ec2.destroy();
    await new Promise((r) => server.close(r));
  }
});
