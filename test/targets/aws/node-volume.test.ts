// test-mode: unit
// The nodes' root volumes are sized for the evidence the plan writes before it ships
// (lib/protocol/evidence-size.ts, lib/targets/aws/node-volume.ts): small plans get the 30-GB floor,
// long repeats at high rates get room for their streams twice, and the size is the same on every
// attempt (a pure function of the spec: RunInstances' ClientToken needs the same parameters).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DB_SNAPSHOT_BYTES } from '../../../lib/protocol/db-sampling';
import { EVIDENCE_BYTES_PER_REQUEST, EVIDENCE_FIXED_BYTES, plannedDbSamplerBytes, plannedEvidenceBytes, plannedRequests } from '../../../lib/protocol/evidence-size';
import { parseCampaignSpec, PROFILES } from '../../../lib/protocol/spec';
import { nodeRootVolumeGb, ROOT_VOLUME_BASE_GB, ROOT_VOLUME_MIN_GB } from '../../../lib/targets/aws/node-volume';

test('planned requests: every repeat and each warm-up at its configuration\'s request rate, the ceiling at its bound', () => {
  // Two configurations (single 200 ev/s at batch 1, batched 1,000 at batch 10), 3 x 30 s.
  const spec = parseCampaignSpec({
    ...PROFILES.rehearsal,
    sustained: {
      ...PROFILES.rehearsal.sustained!,
      repeats: 3,
      repeatSeconds: 30,
      warmupSeconds: 10,
      cooldownSeconds: 5,
      configurations: [
        { name: 'single', eventsPerSecond: 200, batch: 1, p99LimitMs: 50 },
        { name: 'batched', eventsPerSecond: 1000, batch: 10, p99LimitMs: 100 },
      ],
    },
    ceiling: { workers: 2, batch: 500, seconds: 10 },
  });
  // single: 200 req/s x (3 x 30 s + a 10-s warm-up); batched: 100 req/s x (90 + 10); ceiling: 2 x 10 s x 2,000.
  assert.equal(plannedRequests(spec), 200 * 100 + 100 * 100 + 2 * 10 * 2_000);
  // The DB sampler's rows: 150 snapshots of each of the 6 repeats (30 s at 200 ms), 100 of the 10-s
  // ceiling (at the 100-ms floor), each with the first row's settings.
  assert.equal(plannedDbSamplerBytes(spec), 6 * (150 * DB_SNAPSHOT_BYTES + 4096) + (100 * DB_SNAPSHOT_BYTES + 4096));
  assert.equal(plannedEvidenceBytes(spec), plannedRequests(spec) * EVIDENCE_BYTES_PER_REQUEST + plannedDbSamplerBytes(spec) + EVIDENCE_FIXED_BYTES);
});

test('a small plan gets the floor; a long, fast one gets the base and twice its evidence; the same spec, the same size', () => {
  assert.equal(nodeRootVolumeGb(plannedEvidenceBytes(parseCampaignSpec(PROFILES.rehearsal))), ROOT_VOLUME_MIN_GB);
  assert.equal(nodeRootVolumeGb(undefined), ROOT_VOLUME_MIN_GB, 'an older caller without the figure: the floor');
  // 20,000 req/s for 100 repeats of an hour: 7.2 billion requests, about 215 GB of evidence.
  const heavy = parseCampaignSpec({
    ...PROFILES.rehearsal,
    watchdogMinutes: 20_000,
    sustained: { repeats: 100, repeatSeconds: 3600, warmupSeconds: 0, cooldownSeconds: 0, configurations: [{ name: 'fast', eventsPerSecond: 20_000, batch: 1, p99LimitMs: 50 }] },
  });
  const bytes = plannedEvidenceBytes(heavy);
  const gb = nodeRootVolumeGb(bytes);
  assert.equal(gb, Math.ceil(ROOT_VOLUME_BASE_GB + (2 * bytes) / 1024 ** 3));
  assert.ok(gb > 400, `${gb} GB`);
  assert.equal(nodeRootVolumeGb(plannedEvidenceBytes(heavy)), gb);
});
