#!/usr/bin/env node
// Entry point of the `rig` command (package.json "bin"). Runs the TypeScript sources through tsx's
// require hook, so `npx rig` works right after `npm ci` with no build step and never runs stale
// compiled code.
'use strict';
const path = require('node:path');
try {
  require('tsx/cjs');
} catch (err) {
  if (!err || err.code !== 'MODULE_NOT_FOUND') throw err;
  // A clone without `npm ci` (or a copy without node_modules): say the fix, not a stack trace.
  // Exit 2, client/exit-codes.ts USAGE ("usage, spec or set-up error: nothing was started").
  const root = path.resolve(__dirname, '..');
  console.error(`rig: its dependencies are not installed (cannot load tsx from ${path.join(root, 'node_modules')}): run \`npm ci\` in ${root} (Node ${process.versions.node}; package.json "engines" says which majors work)`);
  process.exit(2);
}
const { main } = require('../client/main.ts');
// Exit explicitly: a failed connect can leave native handles that would keep the process alive.
// (stdout/stderr to pipes and files are synchronous on Linux, so nothing printed is lost.)
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // Anything no command turned into its own code is a failure of the tool: client/exit-codes.ts FAILED.
    console.error(`rig: ${err && err.message ? err.message : String(err)}`);
    process.exit(1);
  },
);
