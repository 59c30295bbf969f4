// Which of the rig's search attributes a namespace has, found from a call Temporal Cloud allows
// (lib/temporal/search-attributes.ts), against a real dev server, directly and through the
// Cloud-shaped front (test/harness/cloud-front.ts), which refuses the OperatorService:
// - registered attributes are found and unregistered ones are missing, whichever way is used;
// - through the front, the OperatorService's PERMISSION_DENIED leads to the visibility queries,
//   which find the same answer, attribute by attribute;
// - a refusal that says nothing about the attributes (a wrong API key) is thrown, never "all missing".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { checkSearchAttributes, RIG_SEARCH_ATTRIBUTE_NAMES } from '../../lib/temporal/search-attributes';
import { startCampaignServer } from '../harness/campaign-server';
import { startCloudFront } from '../harness/cloud-front';
import { waitFor } from '../harness/campaign';

test('search attributes are found through the OperatorService, and through a front that refuses it', async () => {
  const server = await startCampaignServer('rig-sa-');
  after(() => server.close());
  const direct = server.client.connection;
  // A second namespace with none of the rig's attributes (the dev server registers them on `default`).
  await direct.workflowService.registerNamespace({ namespace: 'bare', workflowExecutionRetentionPeriod: msToTs('1 day') });
  await waitFor('namespace bare', () => direct.workflowService.countWorkflowExecutions({ namespace: 'bare', query: '' }).then(() => true), 30_000);

  assert.deepEqual(await checkSearchAttributes(direct, 'default'), { missing: [], via: 'operator' });
  assert.deepEqual(await checkSearchAttributes(direct, 'bare'), { missing: [...RIG_SEARCH_ATTRIBUTE_NAMES], via: 'operator' });

  const front = await startCloudFront({ upstream: server.address });
  after(() => front.stop());
  const tls = { serverNameOverride: front.serverName, serverRootCACertificate: fs.readFileSync(front.ca) };
  const cloud = await Connection.connect({ address: front.address, tls, apiKey: front.apiKey });
  after(() => cloud.close());

  const found = await checkSearchAttributes(cloud, 'default');
  assert.deepEqual([found.missing, found.via], [[], 'query']);
  assert.match(found.operatorRefusal ?? '', /PERMISSION_DENIED: Request unauthorized/);
  const bare = await checkSearchAttributes(cloud, 'bare');
  assert.deepEqual([bare.missing, bare.via], [[...RIG_SEARCH_ATTRIBUTE_NAMES], 'query']);

  // One attribute added (as tcld would on Cloud): found, and only it.
  await direct.operatorService.addSearchAttributes({ namespace: 'bare', searchAttributes: { RigStatus: 2 /* KEYWORD */ } });
  await waitFor('RigStatus on bare', async () => !(await checkSearchAttributes(cloud, 'bare')).missing.includes('RigStatus'), 30_000);
  assert.deepEqual((await checkSearchAttributes(cloud, 'bare')).missing, RIG_SEARCH_ATTRIBUTE_NAMES.filter((n) => n !== 'RigStatus'));

  // What the front saw: TLS with the endpoint's name, the API key on every call, the operator refused.
  const operatorCalls = front.calls.filter((c) => c.path.includes('OperatorService'));
  assert.ok(operatorCalls.length >= 2 && operatorCalls.every((c) => c.refused === 7), JSON.stringify(operatorCalls));
  const counts = front.calls.filter((c) => c.path.endsWith('/CountWorkflowExecutions'));
  assert.ok(counts.length >= 10);
  for (const c of counts) assert.deepEqual([c.sni, c.alpn, c.apiKey, c.refused], [front.serverName, 'h2', 'valid', undefined]);

  // A wrong key: the operator's refusal and the count's both say nothing about the attributes: thrown.
  const wrong = Connection.lazy({ address: front.address, tls, apiKey: 'not-the-key' });
  after(() => wrong.close());
  await assert.rejects(checkSearchAttributes(wrong, 'default'), (err: Error & { code?: number }) => err.code === 16 && /API key wrong/.test(err.message));
});
