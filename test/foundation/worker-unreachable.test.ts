// `rig worker` pointed at an address with no Temporal: it exits non-zero within seconds and names
// the address, both when the port refuses and when something accepts but never answers.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { freePort } from '../../lib/tools/free-port';
import { rig } from '../harness/rig-cli';

test('rig worker with a refused address exits non-zero naming the address', async () => {
  const port = await freePort();
  const res = await rig(['worker'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}` }, 30_000);
  assert.notEqual(res.code, 0);
  assert.match(res.stderr, new RegExp(`cannot reach Temporal at 127\\.0\\.0\\.1:${port}`));
});

test('rig worker with a silent listener gives up at its connect timeout naming the address', async () => {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => sockets.push(s)); // accepts, never speaks HTTP/2
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const res = await rig(['worker'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '3000' }, 30_000);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, new RegExp(`cannot reach Temporal at 127\\.0\\.0\\.1:${port}`));
  } finally {
    sockets.forEach((s) => s.destroy());
    server.close();
  }
});
