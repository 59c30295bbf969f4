// test-mode: unit
// A lost AWS load node launched again (issue 37), its pure decision (lib/protocol/load-node-relaunch.ts):
// which node is launched again, with which ClientToken, and what is terminated first. Node 0 never;
// a node up needs nothing; a lost one gets a token of its own per relaunch (EC2 keeps a token bound to
// its instance for 24 hours after termination), and a relaunch recorded without its instance (an
// attempt that died after the record's write) is launched with the same token, never a new one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { relaunchPlan, relaunchToken, type LoadNodeRelaunch, type NodeInstance } from '../../lib/protocol/load-node-relaunch';

const nodeToken = (i: number) => `rig-0a1b2c3d-load-n${i}`;
const SUFFIX = 'f00d42';
const inst = (node: number, state: string, id = `i-${node}-${state}`): NodeInstance => ({ id, state, node });
const entry = (node: number, k: number, extra: Partial<LoadNodeRelaunch> = {}): LoadNodeRelaunch => ({
  node, k, clientToken: relaunchToken(nodeToken(node), k, SUFFIX), replaces: [], decidedAt: '2026-12-05T22:00:00.000Z', lifetimeMinutes: 90, buildId: 'b1', ...extra,
});
const plan = (nodes: number, instances: NodeInstance[], relaunches: LoadNodeRelaunch[] = []) => relaunchPlan({ nodes, instances, relaunches, nodeToken, suffix: SUFFIX });

test('every node up (pending counts): nothing is launched, nothing terminated', () => {
  const p = plan(3, [inst(0, 'running'), inst(1, 'pending'), inst(2, 'running')]);
  assert.deepEqual(p, { relaunch: [], settle: [] });
});

test('node 1 terminated (no longer listed) and node 2 stopped: both launched again with tokens of their own; the stopped one terminated first', () => {
  const p = plan(3, [inst(0, 'running'), inst(2, 'stopped', 'i-two')]);
  assert.deepEqual(p.relaunch, [
    { node: 1, k: 1, clientToken: 'rig-0a1b2c3d-load-n1-r1-f00d42', terminate: [], replaces: [] },
    { node: 2, k: 1, clientToken: 'rig-0a1b2c3d-load-n2-r1-f00d42', terminate: ['i-two'], replaces: ['i-two'] },
  ]);
  const provisioning = [1, 2].map((i) => `${nodeToken(i)}-${SUFFIX}`);
  for (const d of p.relaunch) assert.ok(!provisioning.includes(d.clientToken), `${d.clientToken} is not a provisioning token`);
  assert.equal(new Set(p.relaunch.map((d) => d.clientToken)).size, 2);
});

test('each lost state is lost; only stopped and stopping instances are terminated first (shutting-down is already going)', () => {
  for (const state of ['terminated', 'shutting-down', 'stopped', 'stopping']) {
    const [d] = plan(2, [inst(0, 'running'), inst(1, state, 'i-x')]).relaunch;
    assert.equal(d.node, 1, state);
    assert.deepEqual(d.terminate, ['stopped', 'stopping'].includes(state) ? ['i-x'] : [], state);
  }
});

test('node 0 (the data plane\'s) is never launched again here, lost or not', () => {
  assert.deepEqual(plan(2, [inst(0, 'terminated'), inst(1, 'running')]).relaunch, []);
  assert.deepEqual(plan(2, [inst(1, 'running')]).relaunch, []);
  assert.deepEqual(plan(1, []).relaunch, [], 'one node: nothing beyond node 0');
});

test('a second loss of node 1 gets relaunch 2 and a new token; the first relaunch\'s token is never sent again', () => {
  const first = entry(1, 1, { instanceId: 'i-r1' });
  const [d] = plan(2, [inst(0, 'running'), inst(1, 'stopping', 'i-r1')], [first]).relaunch;
  assert.deepEqual({ k: d.k, token: d.clientToken, terminate: d.terminate, pending: d.pending }, { k: 2, token: 'rig-0a1b2c3d-load-n1-r2-f00d42', terminate: ['i-r1'], pending: undefined });
  assert.notEqual(d.clientToken, first.clientToken);
  // Another node's relaunches do not move node 1's count.
  assert.equal(plan(3, [inst(0, 'running'), inst(2, 'running')], [entry(2, 1, { instanceId: 'i-2' }), entry(2, 2, { instanceId: 'i-3' })]).relaunch[0].k, 1);
});

test('a relaunch recorded without its instance (the attempt died after the write): launched with the same token and parameters, no new entry', () => {
  const open = entry(1, 1);
  const p = plan(2, [inst(0, 'running')], [open]);
  assert.deepEqual(p.relaunch, [{ node: 1, k: 1, clientToken: open.clientToken, terminate: [], replaces: [], pending: open }]);
  // Died after RunInstances too: the node is up again by its tags, and that instance is the relaunch's.
  const up = plan(2, [inst(0, 'running'), inst(1, 'pending', 'i-new')], [open]);
  assert.deepEqual(up, { relaunch: [], settle: [{ node: 1, k: 1, instanceId: 'i-new' }] });
  // Then lost in turn: relaunch 2, not the first's token again.
  assert.equal(plan(2, [inst(0, 'running')], [{ ...open, instanceId: 'i-new' }]).relaunch[0].clientToken, 'rig-0a1b2c3d-load-n1-r2-f00d42');
});

test('the token stays within EC2\'s 64 characters, and says so past it', () => {
  assert.equal(relaunchToken('rig-0a1b2c3d-load-n63', 999, 'abcdef'), 'rig-0a1b2c3d-load-n63-r999-abcdef');
  assert.equal(relaunchToken('t', 1, ''), 't-r1');
  assert.throws(() => relaunchToken('x'.repeat(60), 1, 'abcdef'), /at most 64 characters/);
});
