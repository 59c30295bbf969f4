// test-mode: unit
// The plan's evidence where the load runs counts the node streams of a repeat sent from N load nodes
// (issue 37; lib/protocol/evidence-size.ts plannedNodeStreamBytes): the data plane keeps N node streams
// per repeat (each node's share of the schedule, their rows together the repeat's requests) beside the
// merged stream; a configuration on one node adds nothing, and a spec without `load` sizes as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVIDENCE_BYTES_PER_REQUEST, NODE_STREAM_FIXED_BYTES, plannedEvidenceBytes, plannedNodeStreamBytes, plannedRequests } from '../../lib/protocol/evidence-size';
import { parseCampaignSpec, PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';

const rehearsal = PROFILES.rehearsal;
const spec = (extra: Partial<CampaignSpecInput>) => parseCampaignSpec({ ...rehearsal, ...extra });
// The rehearsal's: single at 240 requests/s, batched at 1,200 events/s in batches of 5 (240 requests/s); 3 repeats of 45 s each.
const REPEAT_REQUESTS = 240 * 45;

test('a spec without load, or with load.nodes 1: no node streams, the evidence as before', () => {
  const none = spec({});
  assert.equal(plannedNodeStreamBytes(none), 0);
  assert.equal(plannedNodeStreamBytes(spec({ load: { nodes: 1 } })), 0);
  assert.equal(plannedEvidenceBytes(spec({ load: { nodes: 1 } })), plannedEvidenceBytes(none));
});

test('load.nodes N: N node streams per repeat on the data plane, their rows the repeat\'s requests, each with its own files', () => {
  const one = spec({});
  for (const nodes of [2, 3, 8]) {
    const many = spec({ load: { nodes } });
    // Six repeats (two configurations x 3), each leaving N streams.
    const expected = 6 * (REPEAT_REQUESTS * EVIDENCE_BYTES_PER_REQUEST + nodes * NODE_STREAM_FIXED_BYTES);
    assert.equal(plannedNodeStreamBytes(many), expected, `${nodes} nodes`);
    assert.equal(plannedRequests(many), plannedRequests(one), 'the requests sent are the same: the schedule is split, not repeated');
    assert.equal(plannedEvidenceBytes(many) - plannedEvidenceBytes(one), expected, `${nodes} nodes: the node streams on top of the merged one`);
  }
  // More nodes, more streams: the same rows in more files.
  assert.equal(plannedNodeStreamBytes(spec({ load: { nodes: 4 } })) - plannedNodeStreamBytes(spec({ load: { nodes: 2 } })), 6 * 2 * NODE_STREAM_FIXED_BYTES);
});

test('per configuration: only the repeats sent from several nodes count; the warm-ups and the ceiling run from one', () => {
  const sustained = rehearsal.sustained!;
  const mixed = spec({ sustained: { ...sustained, configurations: [{ ...sustained.configurations[0], load: { nodes: 3 } }, sustained.configurations[1]] } });
  assert.equal(plannedNodeStreamBytes(mixed), 3 * (REPEAT_REQUESTS * EVIDENCE_BYTES_PER_REQUEST + 3 * NODE_STREAM_FIXED_BYTES));
  // The spec's 4, a configuration's own 1: that one stays on one node.
  const overridden = spec({ load: { nodes: 4 }, sustained: { ...sustained, configurations: [{ ...sustained.configurations[0], load: { nodes: 1 } }, sustained.configurations[1]] } });
  assert.equal(plannedNodeStreamBytes(overridden), 3 * (REPEAT_REQUESTS * EVIDENCE_BYTES_PER_REQUEST + 4 * NODE_STREAM_FIXED_BYTES));
  // Warm-ups and the ceiling: the same with or without them.
  const bare = spec({ load: { nodes: 2 }, sustained: { ...sustained, warmupSeconds: 0 }, ceiling: undefined });
  assert.equal(plannedNodeStreamBytes(bare), plannedNodeStreamBytes(spec({ load: { nodes: 2 } })));
});
