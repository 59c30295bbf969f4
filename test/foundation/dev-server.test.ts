// `rig dev up|down|status` against the real CLI dev server: state on disk survives a restart, the
// rig's search attributes exist, and `down` stops only what `up` started.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import '../harness/temporal';
import { freePort } from '../../lib/tools/free-port';
import { rig } from '../harness/rig-cli';
import { echo } from '../fixtures/workflows';

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dev-test-'));
const env = { RIG_STATE_DIR: stateDir };
after(async () => {
  await rig(['dev', 'down'], env);
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('rig dev: a completed workflow survives a server restart; search attributes registered; idempotent up', async () => {
  const port = await freePort();
  const uiPort = await freePort();
  const ports = ['--port', String(port), '--ui-port', String(uiPort)];
  const address = `127.0.0.1:${port}`;

  const up = await rig(['dev', 'up', ...ports], env);
  assert.equal(up.code, 0, up.stderr);
  assert.match(up.stdout, new RegExp(`Web UI: http://127\\.0\\.0\\.1:${uiPort}`));
  assert.ok(fs.existsSync(path.join(stateDir, 'temporal', 'dev.db')), 'the database file is under the state folder');

  const again = await rig(['dev', 'up', ...ports], env);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /already up/);

  let connection = await Connection.connect({ address });
  const names = Object.keys((await connection.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes);
  for (const name of ['RigCampaign', 'RigTarget', 'RigStep', 'RigStatus']) assert.ok(names.includes(name), `${name} registered`);

  const client = new Client({ connection });
  const native = await NativeConnection.connect({ address });
  const w = await Worker.create({ connection: native, taskQueue: 'dev-test', workflowsPath: require.resolve('../fixtures/workflows') });
  const result = await w.runUntil(client.workflow.execute(echo, { taskQueue: 'dev-test', workflowId: 'survives-restart', args: ['x'] }));
  assert.equal(result, 'echo: x');
  await native.close();
  await connection.close();

  const down = await rig(['dev', 'down'], env);
  assert.equal(down.code, 0);
  const status = await rig(['dev', 'status', ...ports], env);
  assert.equal(status.code, 1, 'status exits 1 when down');

  const up2 = await rig(['dev', 'up', ...ports], env);
  assert.equal(up2.code, 0, up2.stderr);
  connection = await Connection.connect({ address });
  try {
    const handle = new Client({ connection }).workflow.getHandle('survives-restart');
    const desc = await handle.describe();
    assert.equal(desc.status.name, 'COMPLETED');
    assert.equal(await handle.result(), 'echo: x');
    const history = await handle.fetchHistory();
    assert.ok((history.events?.length ?? 0) >= 5, 'history kept on disk');
  } finally {
    await connection.close();
  }
});

test('rig dev down stops nothing it did not start', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-dev-none-'));
  try {
    const down = await rig(['dev', 'down'], { RIG_STATE_DIR: empty });
    assert.equal(down.code, 0);
    assert.match(down.stdout, /no dev server started by `rig dev up` is running/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
