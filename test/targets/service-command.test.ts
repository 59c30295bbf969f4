// Issue 14, without a rig: whether this machine can start a spec's command (refused before anything
// is made, naming the field), the environment a service gets (the contract of docs/your-service.md,
// "The service contract"), and that a user's command is recognised as ours by its marker alone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { pidMatches } from '../../lib/targets/local/proc';
import { MARKER_CAMPAIGN, MARKER_RESOURCE } from '../../lib/targets/local/rig-paths';
import { assertCommandStartable, resolveProgram } from '../../lib/targets/local/service-command';
import { serviceEnv, stopService } from '../../lib/targets/local/service-process';
import { ServiceRefusal } from '../../lib/targets/service-refusal';
import { parseCampaignSpec, PROFILES } from '../../lib/protocol/spec';
import { variantRuns } from '../../lib/protocol/service-spec';
import { variantSettings } from '../../lib/protocol/variants';

const refused = async (run: Parameters<typeof assertCommandStartable>[0], re: RegExp) => {
  await assert.rejects(assertCommandStartable(run), (err: Error) => err instanceof ServiceRefusal && re.test(err.message));
};

test('a command that cannot start here is refused naming the field', async () => {
  await assertCommandStartable(undefined);
  await assertCommandStartable({ command: [process.execPath, '-v'], readyTimeoutSeconds: 60 });
  assert.ok(resolveProgram('sh')?.endsWith('/sh'), 'a bare name is looked up on PATH');
  await refused({ command: ['/nonexistent/bin/serve'], readyTimeoutSeconds: 60 }, /^service\.run\.command\[0\]: \/nonexistent\/bin\/serve is not an executable file/);
  await refused({ command: ['no-such-program-rig'], readyTimeoutSeconds: 60 }, /^service\.run\.command\[0\]: "no-such-program-rig" is not on the PATH .*give its absolute path/);
  await refused({ command: [process.execPath], cwd: '/nonexistent-folder', readyTimeoutSeconds: 60 }, /^service\.run\.cwd: \/nonexistent-folder is not a folder/);
  await refused({ image: 'ghcr.io/me/hc:1', readyTimeoutSeconds: 60 }, /^service\.run\.image: the local target runs a command/);
  const busy = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => busy.once('listening', r));
  const port = (busy.address() as net.AddressInfo).port;
  try {
    await refused({ command: [process.execPath], port, readyTimeoutSeconds: 60 }, new RegExp(`^service\\.run\\.port: something already listens on 127\\.0\\.0\\.1:${port}`));
  } finally {
    busy.close();
  }
});

test('the service environment: rig-owned names win, settings as given, no Temporal or AWS credentials', () => {
  process.env.TEMPORAL_API_KEY = 'do-not-pass';
  process.env.AWS_SECRET_ACCESS_KEY = 'do-not-pass';
  try {
    const env = serviceEnv(
      { campaignId: 'c1', resourceId: 'service-1', rigDir: '/tmp/rig', databaseUrl: 'postgres://app:pw@127.0.0.1:5/hc', service: { run: { command: ['/bin/true'], readyTimeoutSeconds: 60 }, env: { APP_MODE: 'fast', HC_LAST_USED: 'every-request' } } },
      { host: '127.0.0.1', port: 4321 },
    );
    assert.equal(env.DATABASE_URL, 'postgres://app:pw@127.0.0.1:5/hc');
    assert.equal(env.HC_DATABASE_URL, env.DATABASE_URL);
    assert.equal(env.PORT, '4321');
    assert.equal(env.HC_PORT, '4321');
    assert.equal(env.HOST, '127.0.0.1');
    assert.equal(env.APP_MODE, 'fast');
    assert.equal(env.HC_LAST_USED, 'every-request');
    assert.equal(env.HC_INSERT, undefined, 'the reference switches are not passed to a user\'s build');
    assert.equal(env[MARKER_CAMPAIGN], 'c1');
    assert.equal(env.TEMPORAL_API_KEY, undefined);
    assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined);
    assert.ok(env.PATH, 'the rest of the worker\'s environment is inherited');
    const ref = serviceEnv({ campaignId: 'c1', resourceId: 'service-1', rigDir: '/tmp/rig', databaseUrl: 'x', service: { lastUsed: 'per-minute', insert: 'multi-row', aggregate: 'scan' } }, { host: '127.0.0.1', port: 0 });
    assert.equal(ref.HC_INSERT, 'multi-row');
    assert.equal(ref.HC_PORT, '0');
  } finally {
    delete process.env.TEMPORAL_API_KEY;
    delete process.env.AWS_SECRET_ACCESS_KEY;
  }
});

test('a user\'s command (no script of ours in its argv) is ours by its marker only, and stopped by it', async () => {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, [MARKER_CAMPAIGN]: 'c-cmd', [MARKER_RESOURCE]: 'service-1' } });
  const pid = child.pid!;
  try {
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(pidMatches(pid, { campaignId: 'c-cmd', resourceId: 'service-1' }), true);
    assert.equal(pidMatches(pid, { campaignId: 'c-cmd', resourceId: 'service-2' }), false, 'another resource');
    assert.equal(pidMatches(pid, { campaignId: 'c-cmd', resourceId: 'service-1', cmdlineHas: 'reference/main.ts' }), false, 'the reference service\'s script is not in its argv');
    assert.equal(await stopService(pid, { campaignId: 'other', resourceId: 'service-1' }), 'not-ours');
    assert.equal(await stopService(pid, { campaignId: 'c-cmd', resourceId: 'service-1' }, 2000), 'stopped');
  } finally {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // stopped above
    }
  }
});

test('a variant may bring its own build: it runs in that variant, and a build that cannot start here is refused naming the variant\'s field', async () => {
  const other = { command: [process.execPath, '--import', 'tsx', '/srv/other/main.ts'], readyTimeoutSeconds: 60 };
  const spec = parseCampaignSpec({
    ...PROFILES.rehearsal,
    variants: { order: 'blocks', control: { name: 'ours' }, treatments: [{ name: 'theirs', service: { run: other, env: { HC_LAST_USED: 'every-request' } } }] },
  });
  assert.deepEqual(variantSettings(spec, 'theirs').service.run, other);
  assert.equal(variantSettings(spec, 'ours').service.run, undefined, 'the control runs the campaign\'s build (the reference service)');
  assert.deepEqual(variantRuns(spec), [{ field: 'variants.treatments[0].service.run', run: other }]);
  await assert.rejects(
    assertCommandStartable({ command: ['/nonexistent/bin/serve'], readyTimeoutSeconds: 60 }, 'variants.treatments[0].service.run'),
    (err: Error) => err instanceof ServiceRefusal && /^variants\.treatments\[0\]\.service\.run\.command\[0\]: \/nonexistent\/bin\/serve is not an executable file/.test(err.message),
  );
  assert.throws(
    () => parseCampaignSpec({ ...PROFILES.rehearsal, variants: { control: { name: 'a' }, treatments: [{ name: 'b', service: { run: { image: 'ghcr.io/me/hc:1' } } }] } }),
    /variants\.treatments\[0\]\.service\.run\.image: a variant runs on the local target only/,
  );
});
