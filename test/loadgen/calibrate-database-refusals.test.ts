// `rig calibrate --database`'s bad input as a user meets it: each refused with exit 2, naming the flag
// and the fix, before any cluster is made. The calibration itself is test/targets/db-calibration.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rig } from '../harness/rig-cli';

test('rig calibrate --database: bad input names the flag and the fix (exit 2)', async () => {
  for (const [args, message] of [
    [['--database', '--part', 'vacuum'], /--part must be one of lock, wal, markers, zone, got 'vacuum'/],
    [['--database', '--case', '1'], /--case and --p99-limit-ms are the instrument's: with --database, use --part/],
    [['--database', '--log', '/tmp/postgres.log'], /--log names the server log of the cluster --db names/],
    [['--database', '--db', 'localhost:5432'], /--db must be a postgres:\/\/ URL of a superuser, got 'localhost:5432'/],
    [['--db', 'postgres://x@127.0.0.1/db'], /--db goes with --database/],
  ] as const) {
    const { code, stderr } = await rig(['calibrate', ...args]);
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
    assert.match(stderr, message);
  }
});
