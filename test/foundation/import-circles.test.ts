// test-mode: unit
// The report and the protocol read top-down: no file of lib/evidence/report/ or lib/protocol/ reaches
// itself again through its imports (type-only ones included). Item 9 of issue 25 removed a circle of 9
// files from the report (the model imported the section builders, which imported the model's types
// back); this keeps it, and any new one, from coming back unnoticed, naming the files of the circle.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { findCircles, readImportGraph } from '../harness/import-graph';

const root = path.resolve(__dirname, '../..');
const scope = ['lib/evidence/report', 'lib/protocol'].map((d) => path.join(root, d));
const inScope = (f: string) => scope.some((d) => f.startsWith(d + path.sep));
const shown = (circle: string[]) => circle.map((f) => path.relative(root, f)).join(' -> ');

test('lib/evidence/report/ and lib/protocol/ have no import circle', () => {
  const graph = readImportGraph(scope);
  assert.ok([...graph.keys()].filter(inScope).length > 40, 'the folders were read');
  const circles = findCircles(graph).filter((c) => c.some(inScope));
  assert.deepEqual(circles.map(shown), [], `import circles:\n${circles.map(shown).join('\n')}`);
});

test('the reader sees a circle made of type-only imports and re-exports, and none through comments or strings', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-circles-'));
  try {
    const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
    write('a.ts', "import type { B } from './b';\nexport interface A { b: B }\n");
    write('b.ts', "export { C as B } from './c.js';\n");
    write('c.ts', "import type { A } from './a';\nexport interface C { a: A }\n");
    write('d.ts', "// import { E } from './e';\nexport const s = './e';\nexport type F = import('./f').F;\n");
    write('e.ts', "import { s } from './d';\nexport const E = s;\n");
    write('f.ts', 'export type F = number;\n');
    write('g.ts', "export type G = import('./g').G | number;\n");
    const circles = findCircles(readImportGraph([dir])).map((c) => c.map((f) => path.basename(f)));
    assert.deepEqual(circles, [['a.ts', 'b.ts', 'c.ts', 'a.ts'], ['g.ts', 'g.ts']]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
