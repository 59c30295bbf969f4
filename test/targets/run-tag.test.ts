// test-mode: unit
// Run tags (activities/repeat.ts, activities/warmup.ts) count a repeat's rows in the database: two
// configurations must never share one. Cut to 36 characters (issue 47 item 3), two 40-character names
// sharing their first 36 gave one tag, and each repeat's reconciliation counted the other's rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runTagFor, runTagName } from '../../activities/repeat';
import { warmupTagFor } from '../../activities/warmup';
import { nodeRunTag } from '../../lib/protocol/node-share';

const TAG = /^[A-Za-z0-9._:-]{1,64}$/; // lib/loadgen/options.ts: what the generator takes
const prefix = 'ingest-sustained-batch-of-one-at-200'; // 36 characters

test('two 40-character names sharing their first 36 characters get different run tags', () => {
  assert.equal(prefix.length, 36);
  const long1 = `${prefix}-one`;
  const long2 = `${prefix}-two`;
  assert.equal(long1.length, 40);
  assert.equal(long2.length, 40);
  assert.notEqual(runTagFor('camp', long1, 1, 1), runTagFor('camp', long2, 1, 1));
  assert.notEqual(warmupTagFor('camp', long1, 1), warmupTagFor('camp', long2, 1));
  // Each tag is the generator's (64 characters at most, its alphabet), with a node's suffix too.
  for (const tag of [runTagFor('camp', long1, 100, 99), warmupTagFor('camp', long2, 99), nodeRunTag(runTagFor('camp', `${prefix}${'z'.repeat(28)}`, 100, 99), { node: 11, nodes: 12 })]) {
    assert.match(tag, TAG, tag);
  }
});

test('a name of 36 characters or fewer stands in its tags as it is; a longer one by its start and its hash, never equal to a short one', () => {
  // The tags every such configuration always had: a retry of an attempt begun before this change reads its rows under the same tag.
  assert.match(runTagFor('camp', 'single', 2, 1), /^[0-9a-f]{10}\.single\.r2\.a1$/);
  assert.equal(runTagName(prefix), prefix);
  const long = runTagName(`${prefix}-one`);
  assert.match(long, /^ingest-sustained-batch-:[0-9a-f]{12}$/);
  assert.equal(long.length, 36);
  // ':' is in no configuration name (lib/protocol/spec.ts), so a long name's part is never a short name.
  assert.ok(long.includes(':'));
  assert.equal(runTagName(`${prefix}-one`), long, 'the same name, the same tag (a retry finds its rows)');
});
