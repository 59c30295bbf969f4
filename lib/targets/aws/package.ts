// The package the app and load nodes run: this project as `npm pack` makes it, plus its
// package-lock.json, uploaded to the campaign's artifacts bucket under a key made of their sha256, so
// a retried provision finds the same key there and uploads nothing.
//
// What is in it, checked when this was written: package.json has no "files", so npm pack takes every
// file git does not ignore (bin/rig.cjs, the TypeScript sources that tsx runs, reference/ that bring-
// up imports, tsconfig.json; also test/ and docs, ~600 kB packed, left in rather than risk a "files"
// list that misses a runtime import). npm pack never includes package-lock.json, and `npm ci` needs
// it, so it travels as a second object beside the tarball under the same content key. The node runs
// `npm ci --omit=dev --ignore-scripts`: no file the worker loads (lib, activities, workflows, worker,
// client, bin, reference) imports a devDependency (@temporalio/testing, playwright-core, autocannon,
// typescript, @types/*); tsx, which bin/rig.cjs needs, is a dependency. --ignore-scripts skips this
// project's postinstall (it installs the Temporal CLI and moto into .venv, which a node never uses)
// and nothing the worker needs has an install script of its own (@swc/core, esbuild and the Temporal
// core bridge ship their native parts as per-platform packages, which the lock file lists).
// npm pack writes fixed mtimes, so the same tree packs to the same bytes and the same key.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { ProgressFn } from '../target';
import { projectRoot } from '../../tools/paths';
import { runProgram } from '../../tools/run';
import type { AwsClients } from './clients';
import { isNamed } from './errors';
import { emulatorMap } from './emulator-map';
import { RDS_CA_ENV } from './rds-ca';

export interface RigPackage {
  /** sha256 (hex) of the tarball's bytes followed by the lock file's. */
  sha256: string;
  tarball: Buffer;
  lock: Buffer;
}

export interface PackageKeys {
  tarball: string;
  lock: string;
  /** What the nodes' role may read: both keys, nothing else in the bucket. */
  prefix: string;
}

export function packageKeys(sha256: string): PackageKeys {
  const prefix = `packages/${sha256}/`;
  return { prefix, tarball: `${prefix}rig.tgz`, lock: `${prefix}package-lock.json` };
}

/** The vendored CA bundle's path in the project (and, under package/, in the tarball). */
export const VENDORED_IN_PACKAGE = 'lib/targets/aws/rds-global-bundle.pem';

/**
 * The tarball with one file's bytes replaced, packed again as npm pack packs (sorted, owner 0, npm's
 * fixed mtime, gzip without a time stamp), so the same inputs give the same bytes and the same key.
 */
export async function replaceInTarball(tarball: Buffer, file: string, bytes: Buffer, work: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(work, 'tree-'));
  const tgz = path.join(work, 'in.tgz');
  fs.writeFileSync(tgz, tarball);
  await runProgram('tar', ['-xzf', tgz, '-C', dir], { timeoutMs: 5 * 60_000 });
  const target = path.join(dir, 'package', file);
  if (!fs.existsSync(target)) throw new Error(`the package has no ${file} to replace`);
  fs.writeFileSync(target, bytes);
  const tar = path.join(work, 'out.tar');
  await runProgram('tar', ['--sort=name', '--mtime=1985-10-26 08:15:00Z', '--owner=0', '--group=0', '--numeric-owner', '-cf', tar, '-C', dir, 'package'], { timeoutMs: 5 * 60_000 });
  return zlib.gzipSync(fs.readFileSync(tar), { level: 9 });
}

/** Packs the project at `root` (default this checkout) with npm pack; RIG_RDS_CA_BUNDLE's bundle replaces the vendored one. */
export async function buildPackage(root: string = projectRoot, env: NodeJS.ProcessEnv = process.env): Promise<RigPackage> {
  const lockFile = path.join(root, 'package-lock.json');
  if (!fs.existsSync(lockFile)) throw new Error(`${lockFile} is missing: the nodes install with npm ci, which needs it (run npm install once to make it)`);
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-pack-'));
  try {
    const { stdout } = await runProgram('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: root, env: process.env, timeoutMs: 5 * 60_000 });
    const packed = (JSON.parse(stdout) as { filename: string }[])[0];
    if (!packed?.filename) throw new Error(`npm pack in ${root} printed no file name: ${stdout.slice(0, 200)}`);
    let tarball: Buffer = fs.readFileSync(path.join(dest, path.basename(packed.filename)));
    // A CA bundle given with RIG_RDS_CA_BUNDLE reaches the nodes in their package, in the vendored
    // bundle's place, which is where they read it (rds-ca.ts: they have no RIG_RDS_CA_BUNDLE).
    const given = env[RDS_CA_ENV] && !emulatorMap(env)?.dbCaFile ? fs.readFileSync(env[RDS_CA_ENV]) : undefined;
    if (given && !given.equals(fs.readFileSync(path.join(root, VENDORED_IN_PACKAGE)))) tarball = await replaceInTarball(tarball, VENDORED_IN_PACKAGE, given, dest);
    const lock = fs.readFileSync(lockFile);
    const sha256 = createHash('sha256').update(tarball).update(lock).digest('hex');
    return { sha256, tarball, lock };
  } finally {
    fs.rmSync(dest, { recursive: true, force: true });
  }
}

async function exists(c: AwsClients, bucket: string, key: string): Promise<boolean> {
  try {
    await c.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (isNamed(err, 'NotFound', 'NoSuchKey')) return false;
    throw err;
  }
}

/** Uploads what is not there yet; gives the keys and how many objects it uploaded (0 on a retry). */
export async function uploadPackage(c: AwsClients, bucket: string, pkg: RigPackage, onProgress: ProgressFn = () => {}): Promise<PackageKeys & { uploaded: number }> {
  const keys = packageKeys(pkg.sha256);
  let uploaded = 0;
  for (const [key, body, type] of [
    [keys.lock, pkg.lock, 'application/json'],
    // The tarball last: its presence says the pair is complete.
    [keys.tarball, pkg.tarball, 'application/gzip'],
  ] as const) {
    if (await exists(c, bucket, key)) continue;
    onProgress(`uploading s3://${bucket}/${key} (${body.length} bytes)`);
    await c.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: type, ChecksumSHA256: createHash('sha256').update(body).digest('base64') }),
    );
    uploaded++;
  }
  return { ...keys, uploaded };
}
