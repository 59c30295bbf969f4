// test-mode: unit
// The build id a worker polls as (lib/tools/build-id.ts): RIG_BUILD_ID as given, else the package
// version plus RIG_GIT_COMMIT, git (an edited tree is a build of its own), or the file npm ci writes;
// nothing to say which code runs is a refusal naming the ways out.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { resolveBuildId } from '../../lib/tools/build-id';

function tree(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-build-id-'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'rig', version: '1.2.3' }));
  return dir;
}
const env = { PATH: process.env.PATH, HOME: process.env.HOME };

test('RIG_BUILD_ID wins as given; one with characters a unit line or a file name cannot carry is refused', async () => {
  const dir = tree();
  assert.deepEqual(await resolveBuildId({ ...env, RIG_BUILD_ID: '2026.12.03-7' }, dir), { buildId: '2026.12.03-7', from: 'RIG_BUILD_ID' });
  await assert.rejects(resolveBuildId({ ...env, RIG_BUILD_ID: 'a b' }, dir), /RIG_BUILD_ID is "a b": use 1 to 200 of/);
});

test('without .git: RIG_GIT_COMMIT, else the build-commit file; neither is a refusal naming both variables', async () => {
  const dir = tree();
  await assert.rejects(resolveBuildId(env, dir), /has no \.git and no build-commit file .*set RIG_GIT_COMMIT to the commit, or RIG_BUILD_ID to the whole build id/);
  fs.writeFileSync(path.join(dir, 'build-commit'), 'a67bf95c1d2e3f4a5b6c7d8e9f00112233445566\n');
  assert.deepEqual(await resolveBuildId(env, dir), { buildId: '1.2.3+a67bf95c1d2e', from: 'build-commit' });
  assert.deepEqual(await resolveBuildId({ ...env, RIG_GIT_COMMIT: 'ce982d5000aa' }, dir), { buildId: '1.2.3+ce982d5000aa', from: 'RIG_GIT_COMMIT' });
  await assert.rejects(resolveBuildId({ ...env, RIG_GIT_COMMIT: 'main' }, dir), /RIG_GIT_COMMIT is 'main': give the commit's hex hash/);
});

test('with .git: the commit, and an edited tree gets a build id of its own (the same edit, the same id)', async () => {
  const dir = tree();
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' }).trim();
  git('init', '-q');
  fs.writeFileSync(path.join(dir, 'a.ts'), 'one\n');
  git('add', '.');
  git('commit', '-qm', 'one');
  const head = git('rev-parse', 'HEAD');
  // The build-commit file of an older install does not count where git knows better.
  fs.writeFileSync(path.join(dir, 'build-commit'), 'a67bf95c1d2e3f4a5b6c7d8e9f00112233445566\n');
  assert.deepEqual(await resolveBuildId(env, dir), { buildId: `1.2.3+${head.slice(0, 12)}`, from: 'git' });
  fs.writeFileSync(path.join(dir, 'a.ts'), 'two\n');
  const edited = await resolveBuildId(env, dir);
  assert.match(edited.buildId, new RegExp(`^1\\.2\\.3\\+${head.slice(0, 12)}\\.dirty-[0-9a-f]{8}$`));
  assert.equal(edited.from, 'git (uncommitted changes)');
  assert.equal((await resolveBuildId(env, dir)).buildId, edited.buildId);
  fs.writeFileSync(path.join(dir, 'a.ts'), 'three\n');
  assert.notEqual((await resolveBuildId(env, dir)).buildId, edited.buildId, 'another edit, another build');
});
