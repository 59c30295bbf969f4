// Issue 14: the service under test is a spec field. A campaign against a second build of the reference
// service started by `service.run` (its own argv, a fixed port of the spec's, a changed setting in
// `service.env`): the build is reached on that port, its /healthz reports the changed setting
// (service.json, the page), a variant brings its own build and overrides one env entry and the
// read-back shows it, and the
// campaign runs its repeats and leaves nothing behind (the command is stopped by its marker).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult } from '../../lib/protocol/campaign-result';
import { freePort } from '../../lib/tools/free-port';
import { campaignEnv, tinySpec } from '../harness/campaign';

const root = path.resolve(__dirname, '..', '..');

interface VariantFile {
  applied: { service: Record<string, string>; restarted: { database: string[]; service: boolean }; serviceUrl: string };
}

test('service.run: a second build of the reference service on its own port, a changed setting read back through /healthz, a variant with its own build overriding env', async () => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const port = await freePort();
  const spec = tinySpec({
    // One repeat per build: each build is measured and reconciled (a second adds nothing this test reads).
    sustained: { ...tinySpec().sustained!, repeats: 1, repeatSeconds: 3, cooldownSeconds: 1, warmupSeconds: 1 },
    service: {
      run: { command: [process.execPath, '--import', 'tsx', path.join(root, 'reference', 'main.ts')], cwd: root, port, readyTimeoutSeconds: 60 },
      env: { HC_LAST_USED: 'every-request', HC_POOL_SIZE: '8' },
    },
    // The treatment brings its own build (the same code started another way: no fixed port, so the rig
    // picks one) and overrides one env entry: two builds compared on one rig.
    variants: {
      order: 'blocks',
      control: { name: 'hot' },
      treatments: [{ name: 'fixed', service: { run: { command: [process.execPath, '--import', 'tsx', path.join(root, 'reference', 'main.ts')], cwd: root, readyTimeoutSeconds: 60 }, env: { HC_LAST_USED: 'per-minute' } } }],
    },
  });
  const handle = await env.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: 'service-run', args: [spec] });
  const result = (await handle.result()) as CampaignResult;
  assert.deepEqual(
    result.configurations.map((c) => `${c.name} ${c.total}`),
    ['single.hot 1', 'single.fixed 1'],
    'every planned repeat ran against the build',
  );
  assert.equal(result.repeats.filter((r) => r.kind === 'sustained' && r.samples > 0 && r.reconciled).length, 2, 'both repeats measured and reconciled');
  const dir = result.resultsDir;

  // The build listened where the spec said, and says it runs with the changed setting.
  const provision = result.steps.find((s) => s.step === 'provision');
  assert.match(provision?.summary ?? '', new RegExp(`service http://127\\.0\\.0\\.1:${port}`));
  const service = JSON.parse(fs.readFileSync(path.join(dir, 'service.json'), 'utf8')) as { reported: Record<string, string> };
  assert.equal(service.reported.lastUsed, 'every-request', 'HC_LAST_USED from service.env reached the build');
  const rig = JSON.parse(fs.readFileSync(path.join(dir, 'rig.json'), 'utf8')) as { serviceBuild: string; service: Record<string, string> };
  assert.match(rig.serviceBuild, new RegExp(`^command .*reference/main\\.ts in ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(port ${port}\\)$`));
  assert.deepEqual(rig.service, { HC_LAST_USED: 'every-request', HC_POOL_SIZE: '8' });

  // The variant's env entry over the campaign's: the build restarted with it, read back again.
  const changes = fs.readdirSync(path.join(dir, 'variants')).sort();
  assert.deepEqual(changes, ['01-hot.json', '02-fixed.json']);
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, 'variants', f), 'utf8')) as VariantFile;
  assert.equal(read('01-hot.json').applied.service.lastUsed, 'every-request');
  assert.equal(read('01-hot.json').applied.restarted.service, false, 'the control is what was provisioned');
  assert.equal(read('02-fixed.json').applied.service.lastUsed, 'per-minute');
  assert.equal(read('02-fixed.json').applied.restarted.service, true);
  const fixed = read('02-fixed.json') as VariantFile & { requested: { service: { run?: { port?: number } } } };
  assert.notEqual(fixed.applied.serviceUrl, `http://127.0.0.1:${port}`, "the treatment's own build, on the port the rig picked");
  assert.equal(fixed.requested.service.run?.port, undefined);

  const page = fs.readFileSync(path.join(dir, 'report.md'), 'utf8');
  assert.match(page, /\| service \| command .*reference\/main\.ts/);
  assert.match(page, /\| service settings \| HC_LAST_USED every-request, HC_POOL_SIZE 8; as its \/healthz reported them: aggregate scan, insert per-event, lastUsed every-request \|/);
  await env.assertClean();
});
