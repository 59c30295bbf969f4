// The workflow bundle, kept on disk by the content of what it is made from. Bundling is webpack over
// workflows/ and what it imports: about 5 s of CPU, paid by every `rig worker` that starts, and by the
// test suite once per control worker (dozens of times a run). Its output is a function of its inputs
// alone, so a bundle made from the same sources by the same bundler is reused instead of made again.
//
// The key hashes a superset of the inputs: every file under workflows/, lib/ and activities/ (the
// bundle follows imports from workflows/ into lib/ and, for types, activities/), package-lock.json (the
// SDK and every package the bundle may pull in) and the bundler's own version. Any edit to any of them
// is another key, so a stale bundle is never handed to a worker: the risk a cache must not take here,
// since a worker running other code than its build id names would break pinned campaigns' replay.
// RIG_BUNDLE_CACHE=off bundles every time; RIG_BUNDLE_CACHE_DIR moves the folder.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Runtime } from '@temporalio/worker';
import { projectRoot } from '../lib/tools/paths';

/** Folders whose every file goes into the key (relative to the project root). */
const SOURCE_DIRS = ['workflows', 'lib', 'activities'];
/** Single files that go into the key. */
const SOURCE_FILES = ['package-lock.json', 'tsconfig.json'];
/** Bundles kept: a few builds side by side (a deploy's old and new tree share a cache only if they share node_modules). */
const KEEP = 6;

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...filesUnder(p));
    else if (d.isFile()) out.push(p);
  }
  return out;
}

/** The cache key: sha256 over the bundler's version and each source file's path and bytes. Pure but for reading them. */
export function bundleKey(root = projectRoot, bundlerVersion = sdkVersion(root)): string {
  const h = crypto.createHash('sha256');
  h.update(`bundler ${bundlerVersion}\n`);
  const files = [...SOURCE_DIRS.flatMap((d) => filesUnder(path.join(root, d))), ...SOURCE_FILES.map((f) => path.join(root, f)).filter((f) => fs.existsSync(f))];
  for (const f of files.map((x) => path.relative(root, x)).sort()) {
    h.update(`${f}\n`);
    h.update(fs.readFileSync(path.join(root, f)));
    h.update('\n');
  }
  return h.digest('hex').slice(0, 32);
}

function sdkVersion(root: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', '@temporalio', 'worker', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function bundleCacheDir(root = projectRoot): string {
  return process.env.RIG_BUNDLE_CACHE_DIR ?? path.join(root, 'node_modules', '.cache', 'rig', 'workflow-bundles');
}

/**
 * The bundle for the tree as it is now: read from the cache when one was made from the same sources,
 * else made by `make` and written (atomically: a worker starting beside this one reads a whole file
 * or none). A cache that cannot be written costs the reuse, never the worker.
 */
export async function cachedWorkflowBundle(make: () => Promise<{ code: string }>, root = projectRoot): Promise<{ code: string; cached: boolean }> {
  if (process.env.RIG_BUNDLE_CACHE === 'off') return { code: (await make()).code, cached: false };
  const dir = bundleCacheDir(root);
  const file = path.join(dir, `${bundleKey(root)}.js`);
  try {
    const code = fs.readFileSync(file, 'utf8');
    if (code.length > 0) {
      // Used: newest for the pruning.
      const now = new Date();
      fs.utimesSync(file, now, now);
      return { code, cached: true };
    }
  } catch {
    // not made yet
  }
  const { code } = await make();
  try {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, file);
    prune(dir);
  } catch {
    // read-only tree or full disk: the next worker bundles again
  }
  return { code, cached: false };
}

/** Keeps the newest KEEP bundles. */
function prune(dir: string): void {
  const bundles = fs
    .readdirSync(dir)
    .filter((f) => /^[0-9a-f]{32}\.js$/.test(f))
    .map((f) => ({ f, t: fs.statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { f } of bundles.slice(KEEP)) fs.rmSync(path.join(dir, f), { force: true });
}

let bundle: Promise<{ code: string }> | undefined;

/**
 * The rig's workflows, bundled once per process and, across processes, reused from disk by their
 * sources (cachedWorkflowBundle): every Worker a process creates that runs workflows is handed the same
 * code (samples-typescript `production/`): `rig worker`'s, and the tests' (their doubles' workers and
 * the recorded-path replay), which made a bundle per worker, about 5 s of CPU each, before.
 */
export function rigWorkflowBundle(): Promise<{ code: string }> {
  bundle ??= cachedWorkflowBundle(() => bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: Runtime.instance().logger }));
  // A failed bundle is not kept: the next worker tries again and sees the error itself.
  bundle.catch(() => (bundle = undefined));
  return bundle;
}
