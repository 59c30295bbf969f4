// test-mode: unit
// `rig rehearse` pins its campaign to this machine (client/rehearsal-pin.ts): the spec it starts has
// this host in "host", so only this host's worker claims it; a spec pinned to another host is refused
// before anything starts, naming both hosts and the fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pinnedToThisMachine } from '../../client/rehearsal-pin';

test('rig rehearse pins its campaign to this machine, and refuses a spec pinned elsewhere', () => {
  assert.deepEqual(pinnedToThisMachine({ name: 'r' } as { name: string; host?: string }, 'vm-1'), { name: 'r', host: 'vm-1' });
  assert.deepEqual(pinnedToThisMachine({ name: 'r', host: 'vm-1' }, 'vm-1'), { name: 'r', host: 'vm-1' });
  assert.throws(() => pinnedToThisMachine({ name: 'r', host: 'bench-2' }, 'vm-1'), (err: Error) => err.name === 'SpecInputError' && /pins the campaign to host bench-2, and rig rehearse runs it on this machine \(host vm-1\)/.test(err.message));
});
