// The rehearsal campaign end to end on the dev server, started the way docs/temporal-cli-and-schedules.md says with the
// `temporal` CLI and examples/rehearsal.json: every step ran, the report exists and rebuilds from the
// evidence, no secret is in the workflow's history, and `rig check --target local` is clean after.
// The profile is run with its durations cut to what these assertions need (the same steps, the same
// two configurations and four pgbench legs, two shorter repeats of each, a smaller history) and without its
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
import { campaignEnv, saveHistory, waitOnCampaign } from '../harness/campaign';
import { rig } from '../harness/rig-cli';

const root = path.resolve(__dirname, '..', '..');

/**
 * examples/rehearsal.json with its durations cut: two repeats of each configuration (not three: a
 * configuration holds when every repeat passed, and two say that as well), each long enough for the
 * gate's 1,000 samples at either configuration's request rate (see below), short warm-ups and
 * cool-downs, a 2-s ceiling and 2-s pgbench legs (every step and every leg still runs; their figures
 * are not what this test asserts, and each second of them is a second of both cores at full load),
 * a 20k-row history, and no calibration. And limits no host's lateness reaches: each configuration's
 * p99 limit and the probe's budget a minute, so the instrument's lag bound (10 % of the limit) is 6 s
 * and its latest request 60 s, which a host starved to half a core stays far within (drift is the
 * profile's "noted"). Latency is not this test's subject; with the profile's 50 and 100 ms, a loaded
 * host made repeats invalid (the instrument late), and the campaign's verdict any of three. Half the
 * profile's rates, for 9 s (120 requests/s either configuration, 1,080 a repeat: over the gate's 1,000
 * samples): a host loaded past CI's three files stalls the rig's service at the full rates. Everything
 * else (names, batches, legs) is the profile's.
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
  Object.assign(spec.sustained, { repeats: 2, repeatSeconds: 9, cooldownSeconds: 2, warmupSeconds: 2 });
  for (const c of spec.sustained.configurations as Array<{ p99LimitMs: number; eventsPerSecond: number }>) {
    c.p99LimitMs = 60_000;
    c.eventsPerSecond /= 2;
  }
  // The probe at a quarter of its rate: its 4 request slots then let each read take 8 s before one is
  // dropped (at 2/s, 2 s: a loaded host's aggregate over the history took longer, and a dropped probe
  // request fails the repeat on the target's account).
  Object.assign(spec.sustained.probe as object, { rate: 0.5, p99BudgetMs: 60_000 });
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
  // Every repeat of both configurations passed at its first attempt (none invalid: the limits above
  // leave the host's lateness nothing to fail), so both configurations held; without an instrument
  // judged fine enough (no calibration), the campaign says so instead of HELD.
  const said = JSON.stringify({ status: result.status, configurations: result.configurations, repeats: result.repeats.map((r) => [r.dir, r.passed, r.invalid, r.reasons]) }, null, 1);
  const four = ['single', 'batched'].flatMap((c) => [1, 2].map((i) => [c, i, 1, true, null]));
  const sustained = result.repeats.filter((r) => r.kind === 'sustained').map((r) => [r.configuration, r.index, r.attempt, r.passed, r.invalid ?? null]);
  assert.deepEqual(sustained.sort((a, b) => (a[0] === b[0] ? Number(a[1]) - Number(b[1]) : a[0] === 'single' ? -1 : 1)), four, said);
  assert.deepEqual(result.configurations.map((c) => [c.name, c.held, c.notJudged ?? null]), [['single', true, null], ['batched', true, null]], said);
  assert.equal(result.status, 'uncalibrated', said);
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
