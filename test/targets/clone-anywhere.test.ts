// Clone anywhere (issue 26): a checkout whose folders PostgreSQL's unprivileged OS user cannot
// traverse (root's clone under mktemp -d or /root, mode 0700). The state folder is put inside such a
// folder, as a clone there has it. A real local rig is provisioned: its cluster lives in a folder the
// rig makes for that user (/var/tmp/rig-pg-<user>, 0700, owned by it), the service answers, and
// teardown removes it. RIG_PG_DATA_ROOT pointing inside the private folder is refused by rig rehearse
// before anything is started or contacted, naming the folder and the fix; so is a machine where
// neither the checkout nor the fallback root is reachable, by rig rehearse and rig campaign start
// alike (no initdb, no cluster folder, no connection to Temporal). The places are decided for a
// made-up user as any user; the CLI runs as root only: otherwise PostgreSQL runs as the rig's own
// user and there is nothing to place. Times are printed (t.diagnostic), never judged.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { after, test } from 'node:test';
import { ledgerCampaigns } from '../../lib/targets/local/ledger';
import { pgOsUser } from '../../lib/targets/local/pg-binaries';
import { blockedAt, clusterPlace, ClusterPlaceRefusal, FALLBACK_ROOT } from '../../lib/targets/local/pg-data-root';
import { provisionLocal } from '../../lib/targets/local/provision';
import { readRigRecord } from '../../lib/targets/local/rig-record';
import { rigPaths } from '../../lib/targets/local/rig-paths';
import { teardownLocal } from '../../lib/targets/local/teardown';
import { freePort } from '../../lib/tools/free-port';
import { testCampaign } from '../harness/local-rig';
import { skipUnlessRoot } from '../harness/needs-tool';
import { rig } from '../harness/rig-cli';

// Not root, PostgreSQL runs as this user, who owns the checkout: nothing to place. Skipped then, a
// failure on CI (RIG_REQUIRE_TOOLS=1).
const skip = skipUnlessRoot('PostgreSQL run as its own OS user');

// mkdtemp makes the folder 0700, as `mktemp -d` does.
const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-private-'));
const state = path.join(privateDir, 'clone', 'state');
const previous = process.env.RIG_STATE_DIR;
process.env.RIG_STATE_DIR = state;
after(async () => {
  process.env.RIG_STATE_DIR = state;
  try {
    if (fs.existsSync(state)) for (const c of ledgerCampaigns()) await teardownLocal(c);
  } finally {
    fs.rmSync(privateDir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.RIG_STATE_DIR;
    else process.env.RIG_STATE_DIR = previous;
  }
});

test('the place: the rig folder when its user can reach it (or no OS user at all), a rig-made folder when not, RIG_PG_DATA_ROOT when given', () => {
  const other = { name: 'nobody-here', uid: 65000, gid: 65000 };
  assert.equal(fs.statSync(privateDir).mode & 0o777, 0o700);
  assert.deepEqual(blockedAt(path.join(privateDir, 'clone', 'state', 'rigs', 'c1'), other), { dir: privateDir, mode: '0700', owner: process.getuid!() });
  assert.equal(clusterPlace('c1', '/somewhere/rigs/c1', undefined).dir, '/somewhere/rigs/c1/pg', 'not root: the rig folder, as always');
  const moved = clusterPlace('c1', path.join(state, 'rigs', 'c1'), other, {});
  assert.deepEqual([moved.dir, moved.root], [path.join(FALLBACK_ROOT, 'rig-pg-nobody-here', 'c1'), path.join(FALLBACK_ROOT, 'rig-pg-nobody-here')]);
  assert.match(moved.why, new RegExp(`${privateDir} is mode 0700, which nobody-here cannot enter`));
  const open = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-open-'));
  try {
    fs.chmodSync(open, 0o755);
    assert.equal(clusterPlace('c1', path.join(open, 'rigs', 'c1'), other, {}).dir, path.join(open, 'rigs', 'c1', 'pg'));
    assert.equal(clusterPlace('c1', path.join(open, 'rigs', 'c1'), other, { RIG_PG_DATA_ROOT: path.join(open, 'pg') }).dir, path.join(open, 'pg', 'c1'));
  } finally {
    fs.rmSync(open, { recursive: true });
  }
  assert.throws(
    () => clusterPlace('c1', path.join(state, 'rigs', 'c1'), other, { RIG_PG_DATA_ROOT: path.join(privateDir, 'pg') }),
    (err: unknown) => err instanceof ClusterPlaceRefusal && err.message.includes(`cannot enter ${privateDir} (mode 0700`) && err.message.includes(`chmod o+x ${privateDir}`),
  );
});

test('a rig provisioned from a clone in a 0700 folder: its cluster lives where PostgreSQL\'s user can reach it, the service answers, teardown removes it', { skip }, async () => {
  const user = pgOsUser()!;
  const id = testCampaign('clone-0700');
  try {
    const r = await provisionLocal(id, {});
    const rec = readRigRecord(id)!;
    const root = path.join(FALLBACK_ROOT, `rig-pg-${user.name}`);
    assert.equal(rec.cluster.dir, path.join(root, id), 'the cluster moved out of the private folder');
    assert.ok(rigPaths(id).dir.startsWith(privateDir), 'the rig folder itself stays in the state folder');
    const st = fs.statSync(root);
    assert.deepEqual([st.mode & 0o777, st.uid], [0o700, user.uid], `${root}: 0700, owned by ${user.name}`);
    const health = (await (await fetch(`${r.serviceUrl}/healthz`)).json()) as { db_role: string };
    assert.equal(health.db_role, 'hardcount_app');
  } finally {
    await teardownLocal(id);
  }
  assert.equal(fs.existsSync(path.join(FALLBACK_ROOT, `rig-pg-${user.name}`, id)), false, 'teardown removed the cluster folder');
});

test('RIG_PG_DATA_ROOT inside the private folder: rig rehearse refuses before it starts or contacts anything, naming the folder and the fix', { skip }, async (t) => {
  const closed = await freePort();
  const started = Date.now();
  const r = await rig(['rehearse', 'examples/rehearsal.json'], { RIG_PG_DATA_ROOT: path.join(privateDir, 'pgdata'), TEMPORAL_ADDRESS: `127.0.0.1:${closed}`, RIG_STATE_DIR: state });
  const seconds = (Date.now() - started) / 1000;
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`this machine cannot run rehearsal \\(nothing was started\\):\\n  - RIG_PG_DATA_ROOT ${path.join(privateDir, 'pgdata')}: PostgreSQL runs as \\S+ \\(uid \\d+\\), who cannot enter ${privateDir} \\(mode 0700, owner uid 0\\): chmod o\\+x ${privateDir}, or set RIG_PG_DATA_ROOT`));
  assert.doesNotMatch(r.stderr + r.stdout, /cannot reach Temporal|dev server|campaign .* started/, 'refused before Temporal was asked');
  assert.equal(fs.existsSync(path.join(privateDir, 'pgdata')), false, 'nothing was made');
  t.diagnostic(`refused in ${seconds.toFixed(1)} s (the CLI's own start included)`);
});

test('neither the checkout nor the fallback root reachable: refused naming both folders and the fix, whether the root is blocked above it or is someone else\'s', () => {
  const other = { name: 'nobody-here', uid: 65000, gid: 65000 };
  const rigDir = path.join(state, 'rigs', 'c1');
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-fallback-'));
  try {
    // A fallback base the user cannot enter (as /var/tmp would be at mode 0700).
    assert.throws(
      () => clusterPlace('c1', rigDir, other, {}, base),
      (err: unknown) =>
        err instanceof ClusterPlaceRefusal &&
        err.message.includes(`can reach neither the rig folder (${privateDir} is mode 0700) nor ${path.join(base, 'rig-pg-nobody-here')} (${base} is mode 0700)`) &&
        err.message.includes(`set RIG_PG_DATA_ROOT to a folder nobody-here can reach, or chmod o+x ${privateDir}`),
    );
    // An open base, but a root already there that is not the user's: the rig does not take it over.
    fs.chmodSync(base, 0o755);
    const root = path.join(base, 'rig-pg-nobody-here');
    fs.mkdirSync(root, { mode: 0o700 });
    assert.throws(
      () => clusterPlace('c1', rigDir, other, {}, base),
      (err: unknown) =>
        err instanceof ClusterPlaceRefusal &&
        err.message.includes(`nor ${root} (it exists, mode 0700, owner uid ${process.getuid!()}, not made by the rig)`) &&
        err.message.includes(`chown nobody-here ${root} (or remove it: the rig makes it)`),
    );
    // Made by the rig (owned by the user): the place.
    fs.rmdirSync(root);
    assert.equal(clusterPlace('c1', rigDir, other, {}, base).dir, path.join(root, 'c1'));
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

/** A TCP listener standing in for Temporal: it counts who connects, and answers nothing. */
async function countingListener(): Promise<{ address: string; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = net.createServer((socket) => {
    n++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { address: `127.0.0.1:${port}`, connections: () => n, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('neither reachable: rig rehearse and rig campaign start refuse (exit 2) before anything is made or Temporal is contacted, naming the folders and the fix', { skip }, async (t) => {
  // PostgreSQL's user for this test alone: nobody, whose fallback root no other test uses. Made
  // here 0700 and owned by root, as a folder left by someone else would be.
  const user = 'nobody';
  const root = path.join(FALLBACK_ROOT, `rig-pg-${user}`);
  if (fs.existsSync(root)) return t.skip(`${root} exists already: not this test's to change`);
  fs.mkdirSync(root, { mode: 0o700 });
  const temporal = await countingListener();
  try {
    for (const argv of [
      ['rehearse', 'examples/rehearsal.json', '--id', 'clone-refused-r'],
      ['campaign', 'start', 'examples/rehearsal.json', '--id', 'clone-refused-c'],
    ]) {
      const id = argv[argv.length - 1];
      const started = Date.now();
      const r = await rig(argv, { RIG_PG_OS_USER: user, TEMPORAL_ADDRESS: temporal.address, RIG_STATE_DIR: state });
      t.diagnostic(`rig ${argv.join(' ')}: refused in ${((Date.now() - started) / 1000).toFixed(1)} s (the CLI's own start included)`);
      assert.equal(r.code, 2, `rig ${argv.join(' ')}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(`this machine cannot run rehearsal \\(nothing was started\\):\\n  - PostgreSQL runs as ${user} \\(uid \\d+\\), who can reach neither the rig folder \\(${privateDir} is mode 0700\\) nor ${root} \\(it exists, mode 0700, owner uid 0, not made by the rig\\): set RIG_PG_DATA_ROOT to a folder ${user} can reach, or chmod o\\+x ${privateDir}, or chown ${user} ${root}`),
      );
      assert.equal(temporal.connections(), 0, `rig ${argv.join(' ')} never connected to Temporal`);
      assert.deepEqual(fs.readdirSync(root), [], `no cluster folder under ${root}`);
      assert.equal(fs.existsSync(path.join(state, 'rigs', id)), false, 'no rig folder, so no initdb ran');
      assert.ok(!ledgerCampaigns().includes(id), 'nothing in the ledger');
    }
  } finally {
    await temporal.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
