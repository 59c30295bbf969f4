// test-mode: unit
// lib/temporal/worker-identity.ts: which machine a poller in the server's list is. A rig worker's
// identity keeps the SDK's `<pid>@<hostname>` and adds its boot, so two clones of one image (one host
// name) differ, a build draining beside the new one on this machine does not, and this machine's
// previous boot is another machine (the poller check then waits to see whether it still polls).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOtherMachine, machineOf, rigWorkerIdentity } from '../../lib/temporal/worker-identity';

const BOOT = '3f0c2a9e-5d1b-4c6e-9a7f-0b1c2d3e4f50';

test("a rig worker's identity starts with the SDK's <pid>@<hostname> and names its boot and host", () => {
  const id = rigWorkerIdentity({ pid: 4242, osHost: 'bench-1', bootId: BOOT, host: 'bench-1' });
  assert.equal(id, '4242@bench-1 boot 3f0c2a9e rig-host bench-1');
  assert.deepEqual(machineOf(id), { osHost: 'bench-1', boot: '3f0c2a9e' });
  assert.equal(rigWorkerIdentity({ pid: 7, osHost: 'mac', host: 'h' }), '7@mac rig-host h', 'no boot id off Linux');
});

test('same host name and boot: this machine (an old build draining, an earlier process); another boot or host name: another machine', () => {
  const me = machineOf(rigWorkerIdentity({ pid: 1, osHost: 'bench-1', bootId: BOOT, host: 'h' }))!;
  assert.equal(isOtherMachine(rigWorkerIdentity({ pid: 2, osHost: 'bench-1', bootId: BOOT, host: 'h' }), me), false);
  assert.equal(isOtherMachine('2@bench-1', me), false, "the SDK's default identity on this host name (an older rig, a test's worker)");
  assert.equal(isOtherMachine(rigWorkerIdentity({ pid: 2, osHost: 'bench-1', bootId: 'aaaaaaaa-0000', host: 'h' }), me), true, 'a clone with the same host name');
  assert.equal(isOtherMachine(rigWorkerIdentity({ pid: 1, osHost: 'bench-2', bootId: BOOT, host: 'h' }), me), true, 'another host name');
  assert.equal(isOtherMachine('2@bench-2', me), true);
  assert.equal(isOtherMachine('some-program', me), true, 'an identity of no known form is named, not trusted');
});
