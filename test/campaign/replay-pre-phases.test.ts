// Determinism across the campaign's split into phases (workflows/phases/, issue 37): histories
// recorded by main at 964d7ac, the last build whose benchCampaign was one function, replay against
// today's workflows. They were recorded by the tests that run each path, on real servers with the
// test doubles or moto, and copied here unchanged (test-output/histories/): a whole AWS campaign on
// moto (aws-whole), interleaved variants with fresh re-seeds (variants-interleaved), a ladder after
// one warm-up (warmup-ladder), a refused warm-up (refused) and a cancellation (cancelled), an abort
// by update (abort-update), a campaign whose watchdog fired first (fired-first) and one whose
// teardown retried without a cap (teardown-uncapped), a kept rig on the claimed host's queues
// (hosts-kept), a repeat resumed after a killed worker (crash-resume), a calibrated campaign that
// waited for another's lease (lease-second). Each holds the markers of the campaign's deprecated
// patches, flagged deprecated, which the SDK skips once no code asks for them: so they replay after
// step two of issue 24's retirement too, which removed those calls (docs/architecture.md "Retiring
// the campaign's patches").
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import '../harness/temporal';
import { replayFolder } from '../harness/recorded-replay';

const dir = path.resolve(__dirname, '..', 'fixtures', 'histories', 'pre-phases');

test('histories recorded before the campaign was split into phases replay against the phases', async () => {
  for (const [workflowId, error] of await replayFolder(dir, 5)) assert.equal(error, undefined, `${workflowId}: ${error?.message}`);
});
