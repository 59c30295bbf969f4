// The rehearsal campaign end to end on the dev server, started the way docs/temporal-cli-and-schedules.md says with the
// `temporal` CLI and examples/rehearsal.json: every step ran, the report exists and rebuilds from the
// evidence, no secret is in the workflow's history, and `rig check --target local` is clean after.
// The profile is run with its durations cut to what these assertions need (the same steps, the same
// two configurations and four pgbench legs, shorter repeats, a smaller history) and without its
// calibration, so that it can run side by side with other files: a calibration judges this host's
// floor and must have the host to itself. The calibrate step inside a campaign is asserted by
// test/loadgen/calibration-activity.test.ts (alone) and test/campaign/aws-campaign.test.ts (on the load
// node, before bring-up); the full-length profile, calibration included, is `npm start`, which CI runs
// on Node 24 after npm test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CampaignResult, StepName } from '../../lib/protocol/campaign-result';
import { rigPaths } from '../../lib/targets/local/rig-paths';
import type { RigSecrets } from '../../lib/targets/local/secrets';
import { toolPath } from '../../lib/tools/binaries';
import { campaignVerdict } from '../../lib/protocol/configuration-state';
import { campaignEnv, saveHistory, waitOnCampaign } from '../harness/campaign';
import { rig } from '../harness/rig-cli';

const root = path.resolve(__dirname, '..', '..');

/**
 * examples/rehearsal.json with its durations cut: repeats long enough for the gate's 1,000 samples at
 * either configuration's request rate (240 req/s each: 1,920 requests in 8 s; at 12 s the thirds were
 * already too small to judge drift, so a longer repeat buys no other verdict), short warm-ups,
 * cool-downs, a 2-s ceiling and 2-s pgbench legs (every step and every leg still runs; their figures
 * are not what this test asserts, and each second of them is a second of both cores at full load),
 * a 20k-row history, and no calibration. Everything else (names, gates, probe, legs) is the profile's.
 */
function shortenedRehearsal(dir: string): string {
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'rehearsal.json'), 'utf8')) as {
    $schema?: string;
    calibrate?: boolean;
    seed: Record<string, unknown>;
    sustained: Record<string, unknown>;
    ceiling: Record<string, unknown>;
    denominator: Record<string, unknown>;
  };
  delete spec.$schema;
  spec.calibrate = false;
  spec.seed.historyRows = 20_000;
  Object.assign(spec.sustained, { repeatSeconds: 8, cooldownSeconds: 2, warmupSeconds: 2 });
  spec.ceiling.seconds = 2;
  spec.denominator.seconds = 2;
  const file = path.join(dir, 'rehearsal-short.json');
  fs.writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

test('the rehearsal profile, started with `temporal workflow start`, runs every step and leaves nothing', async (t) => {
  const env = await campaignEnv();
  await env.inProcessWorker();
  const id = 'cli-rehearsal';
  execFileSync(toolPath('temporal'), [
    'workflow', 'start', '--type', 'benchCampaign', '--task-queue', 'rig', '--workflow-id', id,
    '--input-file', shortenedRehearsal(env.dir), '--address', env.address,
  ]);

  // The secrets exist only in the rig's 0600 file while the rig lives: read them to look for them later.
  // The wait fails as soon as the campaign closes (a failed calibration, say), with its failure.
  const handle = env.client.workflow.getHandle(id);
  const secretsFile = rigPaths(id).secretsFile;
  const secrets = await waitOnCampaign(handle, 'the API key', async () => {
    if (!fs.existsSync(secretsFile)) return undefined;
    const s = JSON.parse(fs.readFileSync(secretsFile, 'utf8')) as RigSecrets;
    return s.apiKey ? s : undefined;
  }, 600_000, 500);
  assert.equal(fs.statSync(secretsFile).mode & 0o777, 0o600);

  const result = (await handle.result()) as CampaignResult;
  const steps = new Map(result.steps.map((s) => [s.step, s]));
  const expected: StepName[] = ['clean-check', 'watchdog', 'provision', 'bring-up', 'seed', 'sustained', 'ceiling', 'denominator', 'teardown', 'clean-check-after', 'report'];
  for (const name of expected) assert.equal(steps.get(name)?.status, 'ok', `${name}: ${steps.get(name)?.summary}`);
  assert.equal(steps.get('calibrate'), undefined, 'calibrate: false runs no calibration');
  // Without an instrument judged fine enough, the campaign says so instead of HELD or NOT HELD.
  // A host loaded enough to make a repeat invalid twice (the instrument's failure) may read NOT JUDGED,
  // which outranks uncalibrated unless another configuration failed on the target's account
  // (campaignVerdict, lib/protocol/configuration-state.ts); nothing else is allowed.
  const unjudged = result.configurations.filter((c) => c.notJudged === 'instrument').map((c) => c.name);
  assert.ok(['uncalibrated', 'not-judged'].includes(result.status), result.status);
  assert.equal(result.status, campaignVerdict(result.configurations, false));
  // Every repeat judged: each of the six has a valid attempt, or its configuration is NOT JUDGED; an
  // invalid attempt is kept beside its re-run, never in place of it.
  // A configuration whose re-run was spent may also end with a repeat left invalid when one of its valid
  // repeats failed: that failure is the target's and outranks the rest (not held, configuration-state.ts).
  for (const c of ['single', 'batched']) {
    const valid = result.repeats.filter((r) => r.configuration === c && !r.invalid);
    const failedValid = valid.some((r) => !r.passed);
    assert.ok(valid.length === 3 || unjudged.includes(c) || failedValid, `${c}: ${valid.length} valid repeats of 3, none failed, and not NOT JUDGED`);
  }
  for (const s of result.steps) t.diagnostic(`${s.step}: ${s.status} ${s.summary ?? ''}`.slice(0, 200));
  assert.deepEqual(result.denominator?.legs.map((l) => l.leg), ['owner-commit', 'owner-1row', 'rls-1row', 'owner-multirow']);

  // The page is there, and `rig report` rebuilds it from the folder alone, byte for byte.
  const html = path.join(result.resultsDir, 'report.html');
  const md = path.join(result.resultsDir, 'report.md');
  assert.ok(fs.existsSync(html) && fs.existsSync(md));
  const rebuilt = await rig(['report', result.resultsDir, '--format', 'md'], env.childEnv);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.equal(rebuilt.stdout, fs.readFileSync(md, 'utf8'));

  // No secret in history: the API key and every database password are absent.
  const historyFile = await saveHistory(env.address, id, id);
  const history = fs.readFileSync(historyFile, 'utf8');
  for (const [name, value] of Object.entries(secrets)) {
    if (typeof value === 'string' && value) assert.ok(!history.includes(value), `${name} appears in the history`);
  }
  assert.ok(!fs.existsSync(secretsFile), 'the secrets went with the rig');
  await env.assertClean();
});
