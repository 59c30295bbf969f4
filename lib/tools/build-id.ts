// The build a worker registers with Temporal (Worker Deployment version): the package version plus
// the commit of the code it runs. A PINNED campaign finishes on the build it started on, so two trees
// that differ must never share a build id, and the same tree must always get the same one.
//
// Where the commit comes from, first that answers:
//   RIG_BUILD_ID     the whole build id, as given (an image tag a deploy pipeline already has);
//   RIG_GIT_COMMIT   the commit, when the tree has no .git (a copied tree, an image built without it);
//   git              `git rev-parse HEAD` in the project; a tree with uncommitted changes to tracked
//                    files adds `.dirty-<hash of the diff>`, so an edited tree is a build of its own;
//   build-commit     the file `npm ci` (scripts/setup-tools.cjs) writes at install, read when there
//                    is no .git (the tree was copied after the install, the .git left behind).
// None of them: the worker refuses to start, naming them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runProgram } from './run';
import { projectRoot } from './paths';

/** Where `npm ci` writes the commit it installed (git-ignored). */
export const BUILD_COMMIT_FILE = path.join(projectRoot, 'build-commit');

export interface BuildId {
  buildId: string;
  /** Where it came from, for `rig worker`'s first line and `rig doctor`. */
  from: string;
}

/** `<version>+<commit, 12 hex>[.dirty-<8 hex>]`: what a build id looks like when the rig makes it. */
export function formatBuildId(version: string, commit: string, dirtyDiff?: string): string {
  const dirty = dirtyDiff ? `.dirty-${crypto.createHash('sha256').update(dirtyDiff).digest('hex').slice(0, 8)}` : '';
  return `${version}+${commit.slice(0, 12)}${dirty}`;
}

function packageVersion(root: string): string {
  return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

const COMMIT = /^[0-9a-f]{7,64}$/;
const BUILD_ID = /^[A-Za-z0-9._+-]{1,200}$/;

export async function resolveBuildId(env: NodeJS.ProcessEnv = process.env, root = projectRoot): Promise<BuildId> {
  const given = env.RIG_BUILD_ID?.trim();
  if (given) {
    // It goes into systemd units (the AWS nodes' workers) and lock file names: plain characters only.
    if (!BUILD_ID.test(given)) throw new Error(`RIG_BUILD_ID is ${JSON.stringify(given)}: use 1 to 200 of A-Z a-z 0-9 . _ + - (e.g. 0.1.0+a67bf95c1d2e)`);
    return { buildId: given, from: 'RIG_BUILD_ID' };
  }
  const version = packageVersion(root);
  const envCommit = env.RIG_GIT_COMMIT?.trim();
  if (envCommit) {
    if (!COMMIT.test(envCommit)) throw new Error(`RIG_GIT_COMMIT is '${envCommit}': give the commit's hex hash (git rev-parse HEAD), or set RIG_BUILD_ID to the whole build id`);
    return { buildId: formatBuildId(version, envCommit), from: 'RIG_GIT_COMMIT' };
  }
  // A worktree's .git is a file, a clone's a folder: either means git knows the tree.
  if (fs.existsSync(path.join(root, '.git'))) {
    const gitEnv = { PATH: env.PATH ?? '', HOME: env.HOME ?? '' };
    const head = (await runProgram('git', ['-C', root, 'rev-parse', 'HEAD'], { env: gitEnv })).stdout.trim();
    const diff = (await runProgram('git', ['-C', root, 'diff', 'HEAD', '--binary'], { env: gitEnv })).stdout;
    return { buildId: formatBuildId(version, head, diff || undefined), from: diff ? 'git (uncommitted changes)' : 'git' };
  }
  try {
    const fileCommit = fs.readFileSync(path.join(root, path.basename(BUILD_COMMIT_FILE)), 'utf8').trim();
    if (COMMIT.test(fileCommit)) return { buildId: formatBuildId(version, fileCommit), from: path.basename(BUILD_COMMIT_FILE) };
  } catch {
    // no file: fall through to the refusal
  }
  throw new Error(
    `no build id: ${root} has no .git and no ${path.basename(BUILD_COMMIT_FILE)} file (npm ci writes it where git is), ` +
      'so the worker cannot say which code it runs; set RIG_GIT_COMMIT to the commit, or RIG_BUILD_ID to the whole build id',
  );
}
