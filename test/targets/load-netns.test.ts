// The local target's load nodes' network namespaces (issue 37), made for real with ip netns (as root):
// each node has its own namespace and address and reaches this machine's end of its pair, a second
// create finds what the first made, removal leaves nothing, and a second removal is a no-op.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { liveResources, readLedger } from '../../lib/targets/local/ledger';
import { campaignNamespaces, createLoadNamespace, freeSubnet, inLoadNamespace, loadNamespaceOf, provisionLoadNamespaces, removeLoadNamespace } from '../../lib/targets/local/load-netns';
import { teardownLocal } from '../../lib/targets/local/teardown';
import { skipUnlessRoot } from '../harness/needs-tool';

// The load nodes' namespaces are made with ip netns: root only. Skipped elsewhere, a failure on CI.
const needsRoot = skipUnlessRoot('ip netns');

// The ledgers of this file's campaigns go to a state folder of its own.
process.env.RIG_STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-netns-state-'));

test('two load nodes in namespaces of their own: own addresses, each reaches its end of the pair; removed whole, twice', { skip: needsRoot }, async () => {
  const campaign = `netns-test-${process.pid}-${Date.now()}`;
  const subnet = freeSubnet();
  const made = [0, 1].map((i) => createLoadNamespace(campaign, i, subnet));
  try {
    assert.deepEqual(made.map((n) => n.nodeIp), [`10.231.${subnet}.2`, `10.231.${subnet}.6`]);
    assert.deepEqual(campaignNamespaces(campaign).sort(), made.map((n) => n.ns).sort());
    // idempotent: a second create (a retry after a kill) makes nothing new and changes nothing
    assert.deepEqual(createLoadNamespace(campaign, 1, subnet), made[1]);
    assert.deepEqual(loadNamespaceOf(campaign, 1, subnet), made[1], 'the same names and addresses from the campaign id');
    // a server on this machine's end of node 1's pair sees node 1's own address as the client's
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.socket.remoteAddress ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, made[1].hostIp, r));
    try {
      const port = (server.address() as AddressInfo).port;
      const argv = inLoadNamespace(made[1], [process.execPath, '-e', `require('http').get('http://${made[1].hostIp}:${port}/', (r) => { r.resume(); r.on('end', () => process.exit(0)); }).on('error', (e) => { console.error(e.message); process.exit(1); })`]);
      // Asynchronously: the server answering it runs on this process's event loop.
      await promisify(execFile)(argv[0], argv.slice(1), { timeout: 60_000 });
      assert.deepEqual(seen, [made[1].nodeIp]);
      // node 0's namespace has no route to node 1's pair: namespaces are apart
      const other = inLoadNamespace(made[0], ['ip', 'route', 'get', made[1].hostIp]);
      assert.throws(() => execFileSync(other[0], other.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }), /unreachable|Network is unreachable/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  } finally {
    for (const n of made) removeLoadNamespace(n);
  }
  assert.deepEqual(campaignNamespaces(campaign), []);
  assert.equal(execFileSync('ip', ['-o', 'link', 'show']).toString().includes(made[0].hostLink), false, 'the veth pairs are gone');
  for (const n of made) assert.doesNotThrow(() => removeLoadNamespace(n), 'a second teardown finds nothing to do');
});

test('made by the rig and removed at teardown: the ledger names each namespace before it is made; a retry makes nothing twice', { skip: needsRoot }, async () => {
  const campaign = `netns-ledger-${process.pid}-${Date.now()}`;
  try {
    const made = provisionLoadNamespaces(campaign, 3);
    assert.deepEqual(made.map((n) => n.node), [0, 1, 2]);
    assert.deepEqual(provisionLoadNamespaces(campaign, 3), made, 'a retry finds the same namespaces, on the subnet the ledger recorded');
    assert.equal(readLedger(campaign).filter((e) => e.op === 'intend').length, 3, 'each intended once');
    assert.deepEqual(liveResources(campaign).map((r) => [r.id, r.kind, r.detail.ns]), made.map((n) => [`load-netns-${n.node}`, 'load-netns', n.ns]));
    const result = await teardownLocal(campaign);
    assert.equal(result.removed.length, 3, JSON.stringify(result));
    assert.deepEqual(campaignNamespaces(campaign), []);
    assert.deepEqual(liveResources(campaign), []);
  } finally {
    for (const ns of campaignNamespaces(campaign)) removeLoadNamespace({ ns, hostLink: `rl${ns.split('-')[1]}h${ns.split('-')[2]}` });
  }
});

test('two campaigns making their namespaces at once start their subnet search apart (the campaign id picks where)', { skip: needsRoot }, () => {
  // Side by side (test files in lanes), both used to take the first free subnet and made the same
  // addresses twice. Each id now starts its search at a subnet of its own; both are free here.
  const a = freeSubnet('load-node-lost');
  const b = freeSubnet('load-node-calibration');
  assert.notEqual(a, b);
  assert.equal(freeSubnet('load-node-lost'), a, 'the same id, the same subnet (while it is free)');
  for (const s of [a, b]) assert.ok(s >= 1 && s <= 254, String(s));
});
