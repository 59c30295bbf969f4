// test-mode: alone
// The calibration server in a process of its own: it records, per ingest request, its own arrival and
// answer-written times (its monotonic clock) keyed by run tag and request number, hands them to the
// parent over IPC, and closes when its parent dies (no orphan listening on a port).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';
import { BodyMaker } from '../../lib/loadgen/body';
import { requestNumber } from '../../lib/loadgen/calibration-server';
import { CalibrationServerProcess } from '../../lib/loadgen/calibration-server-process';

let server: CalibrationServerProcess;
const apiKey = 'calib-test-key';

before(async () => {
  server = await CalibrationServerProcess.start({ apiKey, customers: ['cus_1', 'cus_2'] });
});
after(async () => {
  await server?.stop();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function ingest(runTag: string, ns: number[], batch = 3): Promise<number[]> {
  const bodies = new BodyMaker({ runTag, meter: 'api_calls', customers: ['cus_1', 'cus_2'], batch, seed: 7, quantityMax: 100 });
  return Promise.all(
    ns.map(async (n) => {
      const res = await fetch(`${server.url}/v1/usage-events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: bodies.make(n).json,
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

test('the server runs in a process of its own', () => {
  assert.ok(server.pid && server.pid !== process.pid && alive(server.pid));
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
});

test('per ingest request: arrival and answer-written times on the server clock, keyed by run tag and request number', async () => {
  await server.configure({ serviceMs: 5, failEvery: 4 });
  const ns = [0, 1, 2, 3, 4, 5, 6, 7, 10, 42];
  const statuses = await ingest('truth-a', ns);
  await ingest('truth-b', [0, 1]);
  const rows = await server.truth('truth-a');
  assert.deepEqual(rows.map((r) => r.request).sort((a, b) => a - b), ns, 'one row per request, by its request number');
  for (const r of rows) {
    assert.ok(r.written - r.arrival >= 5, `request ${r.request}: answered after its 5 ms (${(r.written - r.arrival).toFixed(3)} ms)`);
  }
  // the status recorded is the status answered (every 4th arrival is a 500)
  assert.equal(rows.filter((r) => r.status === 500).length, statuses.filter((s) => s === 500).length);
  assert.equal(rows.filter((r) => r.status === 500).length, 2);
  assert.equal((await server.tally('truth-a')).requests, ns.length);
  assert.equal((await server.truth('truth-b')).length, 2, 'another run tag is kept apart');
  assert.deepEqual(await server.truth('truth-a'), [], 'handed over once');
});

test('the request number is read from the generator idempotency key <run tag>-<n>-<position>', () => {
  assert.equal(requestNumber('calib-1-ab12', 'calib-1-ab12-1234-0'), 1234);
  assert.equal(requestNumber('calib-1-ab12', 'calib-1-ab12-0-4'), 0);
  assert.equal(requestNumber('calib-1-ab12', 'other-1234-0'), -1);
  assert.equal(requestNumber('calib-1-ab12', 'calib-1-ab12-x-0'), -1);
});

test('its parent dies: the server closes and its process exits', async () => {
  const helper = path.join(__dirname, 'helpers', 'parent-of-calibration-server.ts');
  const parent = spawn(process.execPath, ['--import', 'tsx', helper], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { server: pid, url } = await new Promise<{ server: number; url: string }>((resolve, reject) => {
    readline.createInterface({ input: parent.stdout }).once('line', (line) => resolve(JSON.parse(line) as { server: number; url: string }));
    parent.on('exit', () => reject(new Error('the parent exited early')));
  });
  assert.ok(alive(pid));
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  parent.kill('SIGKILL');
  const killedAt = Date.now();
  while (alive(pid) && Date.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false, 'the server process is gone');
  await assert.rejects(fetch(`${url}/healthz`), 'nothing listens on its port any more');
});
