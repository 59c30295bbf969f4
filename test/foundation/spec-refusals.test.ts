// test-mode: unit
// Every class of bad spec a newcomer met (issue 26), in one table: the spec (or the file), the exit
// code of `rig campaign start FILE --dry-run` (2: refused before anything is contacted; 0: accepted
// and planned), the field the refusal names and the words of its fix. Run in process through
// client/main.ts, as bin/rig.cjs does. test/foundation/spec-schema.test.ts holds the JSON Schema
// to the same table (REFUSED_SPECS).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { EXIT } from '../../client/exit-codes';
import { captureRig } from '../harness/capture-cli';
import { REFUSED_SPECS, type RefusalCase } from './spec-refusal-cases';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-refusals-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const capture = captureRig;

/** The file the case gives the CLI: its text, a missing path, or a folder. */
function fileOf(c: RefusalCase, i: number): string {
  const file = path.join(dir, `case-${i}.json`);
  if (c.file === 'missing') return path.join(dir, 'no-such-spec.json');
  if (c.file === 'directory') return dir;
  fs.writeFileSync(file, c.text ?? JSON.stringify(c.spec, null, 2));
  return file;
}

const ACCEPTED: RefusalCase[] = [
  { what: 'a UTF-8 BOM before the JSON is accepted', class: 'BOM accepted', text: `\ufeff${fs.readFileSync('examples/rehearsal.json', 'utf8')}`, code: EXIT.OK },
  { what: 'too-short repeats with --allow-unjudgeable run, warned', class: 'too-short repeats', spec: REFUSED_SPECS.find((c) => c.class === 'too-short repeats')!.spec, args: ['--allow-unjudgeable'], code: EXIT.OK, message: /WARNING configuration single: 100 requests per repeat/ },
];

test('every refusal class: exit 2, the field named, the fix said; a BOM and --allow-unjudgeable are accepted', async () => {
  const classes = new Set<string>();
  for (const [i, c] of [...REFUSED_SPECS, ...ACCEPTED].entries()) {
    const r = await capture(['campaign', 'start', fileOf(c, i), '--dry-run', ...(c.args ?? [])]);
    classes.add(c.class);
    assert.equal(r.code, c.code, `${c.what}: exit ${r.code}\n${r.err}`);
    if (c.code === EXIT.OK) {
      assert.match(r.out, /^DRY RUN of campaign /, c.what);
      if (c.message) assert.match(r.out + r.err, c.message, c.what);
      continue;
    }
    assert.equal(r.out, '', `${c.what}: nothing planned`);
    if (c.field) assert.ok(r.err.includes(c.field), `${c.what}: names ${c.field}:\n${r.err}`);
    assert.match(r.err, c.message!, `${c.what}:\n${r.err}`);
  }
  // the list, each at least once
  for (const k of ['limits', 'unknown field', 'secrets', 'JSON syntax', 'BOM accepted', 'missing file', 'directory', 'duplicate names', 'PG size', 'min_wal_size > max_wal_size', 'seed vs disk', 'too-short repeats']) {
    assert.ok(classes.has(k), `the table covers ${k}`);
  }
});
