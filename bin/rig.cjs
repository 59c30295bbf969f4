#!/usr/bin/env node
// Entry point of the `rig` command (package.json "bin"). Runs the TypeScript sources through tsx, so
// `npx rig` works right after `npm ci` with no build step and never runs stale compiled code.
'use strict';
require('tsx/cjs');
const { main } = require('../client/main.ts');
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(`rig: ${err && err.message ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
