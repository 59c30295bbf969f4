// Connection parity with the `temporal` CLI, against the CLI itself: for each case of the table
// (API key, the legacy TEMPORAL_TLS_CERT/KEY/CA variables and their _DATA twins, mTLS, gRPC headers
// with several underscores, the `${namespace}` address template, a temporal.toml profile), the real
// CLI (`temporal workflow list`) and `rig campaign list` run with the same environment against the
// recording Cloud-shaped front (test/harness/cloud-front.ts) (the rig as its own process for three of
// the cases, else `rig campaign list`'s connection and call in this process: "rig ip" in the table). What arrived from each (reached at all,
// TLS by h2, SNI, API key, client certificate, the user's gRPC headers) must be equal, or the rig
// refuses, saying why. The table is printed side by side.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { msToTs } from '@temporalio/common/lib/time';
import { toolPath } from '../../lib/tools/binaries';
import { startCampaignServer } from '../harness/campaign-server';
import { startCloudFront, type CloudFront, type FrontCall } from '../harness/cloud-front';
import { rig, type CliResult } from '../harness/rig-cli';
import { connectClient } from '../../client/connect';
import { temporalEnv } from '../../lib/temporal/connection-env';

/**
 * `rig campaign list`'s connection, in this process: the same loader (temporalEnv) and client
 * (connectClient) over the case's variables, and the same list call; exit 0, or 2 on a refusal.
 * A `rig` process costs seconds of start-up on a loaded machine, so only some cases spawn one.
 */
async function rigListInProcess(env: Record<string, string>): Promise<CliResult> {
  try {
    const rc = await connectClient(temporalEnv(env));
    try {
      for await (const _ of rc.client.workflow.list({ pageSize: 1 })) break;
    } finally {
      await rc.close();
    }
    return { code: 0, stdout: '', stderr: '' };
  } catch (err) {
    return { code: (err as Error).name === 'ConnectionSettingsError' ? 2 : 1, stdout: '', stderr: `rig: ${(err as Error).message}` };
  }
}

/** Headers each client adds of its own (client name and version, the namespace, the CLI's caller-type): not the user's. */
const SDK_HEADERS = new Set(['client-name', 'client-version', 'supported-server-versions', 'temporal-namespace', 'caller-type', 'authorization']);

interface Arrival {
  calls: number;
  tls: string;
  sni: string;
  apiKey: string;
  clientCert: string;
  metadata: string;
}

/** What one client's calls had in common (or every variant, comma-joined, where they differ). */
function arrival(calls: FrontCall[], handshakeFailures: number): Arrival {
  const all = (f: (c: FrontCall) => string) => [...new Set(calls.map(f))].join(', ') || '-';
  return {
    calls: calls.length,
    tls: calls.length ? all((c) => `h2/${String(c.alpn)}`) : handshakeFailures ? `handshake failed (${handshakeFailures})` : 'nothing arrived',
    sni: all((c) => c.sni ?? '(none)'),
    apiKey: all((c) => c.apiKey),
    clientCert: all((c) => c.clientCert ?? '(none)'),
    metadata: all((c) => JSON.stringify(Object.fromEntries(Object.entries(c.metadata).filter(([k]) => !SDK_HEADERS.has(k)).sort()))),
  };
}

function temporalCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(toolPath('temporal'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('the rig connects as the temporal CLI does, case by case, or refuses saying why', async () => {
  for (const k of Object.keys(process.env)) if (k.startsWith('TEMPORAL_')) delete process.env[k];
  const server = await startCampaignServer('rig-parity-');
  after(() => server.close());
  // The namespace the address template case names (its address is `${namespace}:PORT`, localhost).
  await server.client.connection.workflowService.registerNamespace({ namespace: 'localhost', workflowExecutionRetentionPeriod: msToTs('1 day') });
  const keyFront = await startCloudFront({ upstream: server.address });
  const mtlsFront = await startCloudFront({ upstream: server.address, mtls: true });
  after(() => Promise.all([keyFront.stop(), mtlsFront.stop()]));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-parity-home-'));
  after(() => fs.rmSync(home, { recursive: true, force: true }));
  const toml = path.join(home, 'temporal.toml');
  fs.writeFileSync(
    toml,
    `[profile.cloud]\naddress = "${keyFront.address}"\nnamespace = "default"\napi_key = "${keyFront.apiKey}"\n[profile.cloud.tls]\nserver_ca_cert_path = "${keyFront.ca}"\nserver_name = "${keyFront.serverName}"\n[profile.cloud.grpc_meta]\nx_rig_team_id = "bench"\n`,
  );
  const pem = (f: string) => fs.readFileSync(f, 'utf8');
  const k = keyFront;
  const m = mtlsFront;
  const port = (f: CloudFront) => f.address.split(':')[1];
  // cli: run as `rig campaign list` in its own process (else its connection in this one).
  const cases: Array<{ name: string; front: CloudFront; env: Record<string, string>; rigRefuses?: RegExp; cli?: boolean }> = [
    { name: 'API key, CA by path', front: k, env: k.env(), cli: true },
    { name: 'legacy TEMPORAL_TLS_CA', front: k, env: { TEMPORAL_ADDRESS: k.address, TEMPORAL_API_KEY: k.apiKey, TEMPORAL_TLS_CA: k.ca, TEMPORAL_TLS_SERVER_NAME: k.serverName } },
    { name: 'legacy TEMPORAL_TLS_CA_DATA', front: k, env: { TEMPORAL_ADDRESS: k.address, TEMPORAL_API_KEY: k.apiKey, TEMPORAL_TLS_CA_DATA: pem(k.ca), TEMPORAL_TLS_SERVER_NAME: k.serverName } },
    { name: 'mTLS, TEMPORAL_TLS_CLIENT_*', front: m, env: { TEMPORAL_ADDRESS: m.address, TEMPORAL_TLS_CLIENT_CERT_PATH: m.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: m.clientKey, TEMPORAL_TLS_SERVER_CA_CERT_PATH: m.ca, TEMPORAL_TLS_SERVER_NAME: m.serverName } },
    { name: 'mTLS, legacy TEMPORAL_TLS_CERT/KEY/CA', front: m, env: { TEMPORAL_ADDRESS: m.address, TEMPORAL_TLS_CERT: m.clientCert, TEMPORAL_TLS_KEY: m.clientKey, TEMPORAL_TLS_CA: m.ca, TEMPORAL_TLS_SERVER_NAME: m.serverName }, cli: true },
    { name: 'mTLS, legacy _DATA', front: m, env: { TEMPORAL_ADDRESS: m.address, TEMPORAL_TLS_CERT_DATA: pem(m.clientCert), TEMPORAL_TLS_KEY_DATA: pem(m.clientKey), TEMPORAL_TLS_CA_DATA: pem(m.ca), TEMPORAL_TLS_SERVER_NAME: m.serverName } },
    { name: 'legacy TEMPORAL_TLS_CERT over TEMPORAL_TLS_CLIENT_CERT_PATH', front: m, env: { TEMPORAL_ADDRESS: m.address, TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent.crt', TEMPORAL_TLS_CERT: m.clientCert, TEMPORAL_TLS_KEY: m.clientKey, TEMPORAL_TLS_CA: m.ca, TEMPORAL_TLS_SERVER_NAME: m.serverName } },
    { name: 'gRPC headers with several underscores', front: k, env: { ...k.env(), TEMPORAL_GRPC_META_X_RIG_AUTH_TOKEN: 'tok', TEMPORAL_GRPC_META_X_A_B_C: 'abc' } },
    { name: 'address template ${namespace}', front: k, env: { ...k.env('localhost'), TEMPORAL_ADDRESS: `\${namespace}:${port(k)}` } },
    { name: 'temporal.toml profile (grpc_meta key with underscores)', front: k, env: { TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud' } },
    { name: 'TEMPORAL_TLS=TRUE (upper case) with a CA', front: k, env: { TEMPORAL_ADDRESS: k.address, TEMPORAL_API_KEY: k.apiKey, TEMPORAL_TLS: 'TRUE', TEMPORAL_TLS_SERVER_CA_CERT_PATH: k.ca, TEMPORAL_TLS_SERVER_NAME: k.serverName } },
    { name: 'client authority', front: k, env: { ...k.env(), TEMPORAL_CLIENT_AUTHORITY: 'rig-authority.example' }, rigRefuses: /TEMPORAL_CLIENT_AUTHORITY: the rig's workers .* cannot set the :authority/, cli: true },
  ];

  const rows: string[] = [];
  const base = { PATH: process.env.PATH ?? '', HOME: home };
  for (const c of cases) {
    const seen = (f: CloudFront) => ({ calls: f.calls.length, hs: f.handshakeFailures.length });
    let before = seen(c.front);
    const cli = await temporalCli(['workflow', 'list', '--limit', '1'], { ...base, ...c.env });
    const cliArrival = arrival(c.front.calls.slice(before.calls), c.front.handshakeFailures.length - before.hs);
    before = seen(c.front);
    const r = c.cli ? await rig(['campaign', 'list'], { ...base, ...c.env, RIG_TEMPORAL_CONNECT_TIMEOUT_MS: '15000' }) : await rigListInProcess({ ...base, ...c.env });
    const rigArrival = arrival(c.front.calls.slice(before.calls), c.front.handshakeFailures.length - before.hs);
    rows.push(`${c.name}\n  temporal (exit ${cli.code}): ${JSON.stringify({ ...cliArrival, calls: undefined })}\n  rig${c.cli ? '   ' : ' ip'}   (exit ${r.code}): ${c.rigRefuses ? `refused: ${r.stderr.trim().split('\n')[0]}` : JSON.stringify({ ...rigArrival, calls: undefined })}`);
    assert.equal(cli.code, 0, `${c.name}: the CLI itself connects: ${cli.out}`);
    assert.ok(cliArrival.calls > 0, `${c.name}: the CLI's calls arrived`);
    if (c.rigRefuses) {
      assert.equal(r.code, 2, `${c.name}: refused as a set-up error: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, c.rigRefuses);
      assert.equal(rigArrival.calls, 0, `${c.name}: nothing sent once refused`);
      continue;
    }
    assert.equal(r.code, 0, `${c.name}: rig campaign list: ${r.stdout}${r.stderr}`);
    const { calls: _a, ...cliRecord } = cliArrival;
    const { calls: _b, ...rigRecord } = rigArrival;
    assert.deepEqual(rigRecord, cliRecord, `${c.name}: the rig arrived as the CLI did`);
  }
  console.log(`parity table (what the front received from each):\n${rows.join('\n')}`);
});
