#!/usr/bin/env node
// Entry point of the `rig` command (package.json "bin"). Runs the TypeScript sources through tsx's
// require hook, so `npx rig` works right after `npm ci` with no build step and never runs stale
// compiled code.
'use strict';
require('tsx/cjs');
const { main } = require('../client/main.ts');
// Exit explicitly: a failed connect can leave native handles that would keep the process alive.
// (stdout/stderr to pipes and files are synchronous on Linux, so nothing printed is lost.)
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`rig: ${err && err.message ? err.message : String(err)}`);
    process.exit(1);
  },
);
