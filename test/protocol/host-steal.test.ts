// test-mode: unit
// The host-steal note: named beside a repeat only when the hypervisor took a real share of the CPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STEAL_NOTE_PCT, stealNote } from '../../lib/protocol/host-steal';

test('steal under the threshold, or not sampled, adds no note', () => {
  assert.equal(stealNote(null), null);
  assert.equal(stealNote(undefined), null);
  assert.equal(stealNote({ median: 0, max: STEAL_NOTE_PCT - 0.1 }), null);
});

test('steal at or over the threshold is named with its max and median', () => {
  assert.equal(stealNote({ median: 3.5, max: 9.04 }), 'host CPU steal up to 9.0 % (median 3.5 %) during this repeat: the hypervisor took CPU from the load host');
  assert.match(stealNote({ median: 0, max: STEAL_NOTE_PCT })!, /up to 2\.0 %/);
  assert.match(stealNote({ median: 12, max: 31.2 })!, /up to 31 % \(median 12 %\)/);
});
