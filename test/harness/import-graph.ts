// The import graph of the repository's own TypeScript, and the circles in it: what the import-circle
// test holds lib/evidence/report/ and lib/protocol/ to. Specifiers are read by TypeScript's own
// pre-processor (ts.preProcessFile), so `import type`, `export ... from`, `import('./x')` in a type and
// a dynamic import all count, and one in a comment or a string does not: a type-only circle is still a
// circle to a reader, and the one that item 9 of issue 25 removed from the report was mostly types.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Each file (absolute path) to the files its relative specifiers name, resolved as node16 does for .ts. */
export type ImportGraph = Map<string, string[]>;

/** The .ts file a relative specifier names from `from`, or null (a .json, a missing file). */
export function resolveSpecifier(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const f of [base, `${stem}.ts`, `${stem}.tsx`, path.join(base, 'index.ts')]) {
    if (f.endsWith('.ts') || f.endsWith('.tsx')) if (fs.existsSync(f) && fs.statSync(f).isFile()) return f;
  }
  return null;
}

/** The relative imports of one file, resolved (package imports are not ours and cannot close a circle). */
export function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const out = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const to = resolveSpecifier(file, fileName);
    if (to) out.add(to);
  }
  return [...out].sort();
}

/**
 * The graph of every file under `dirs` and every file they reach through relative imports, so a circle
 * that leaves the folders and comes back (report -> ../records -> report) is seen too.
 */
export function readImportGraph(dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  const todo = dirs.flatMap((d) => tsFilesUnder(d));
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (graph.has(f)) continue;
    const to = importsOf(f);
    graph.set(f, to);
    todo.push(...to.filter((t) => !graph.has(t)));
  }
  return graph;
}

function tsFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFilesUnder(p));
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

/**
 * One circle per strongly connected component of more than one file (or a file importing itself), each
 * as the files of a shortest circle through the component's first file, that file repeated at the end:
 * [a, b, a]. Tarjan's algorithm, iterative (a deep chain must not overflow the stack).
 */
export function findCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const edges = graph.get(top.v) ?? [];
      if (top.i < edges.length) {
        const w = edges[top.i++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.v, Math.min(low.get(top.v) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].v;
        low.set(parent, Math.min(low.get(parent) as number, low.get(top.v) as number));
      }
      if (low.get(top.v) === index.get(top.v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.v);
        if (comp.length > 1 || (graph.get(top.v) ?? []).includes(top.v)) components.push(comp.sort());
      }
    }
  }
  return components.map((c) => shortestCircle(graph, c));
}

/** A shortest circle through c[0] inside component c (breadth-first): the files in import order. */
function shortestCircle(graph: ImportGraph, c: string[]): string[] {
  const inside = new Set(c);
  const start = c[0];
  const prev = new Map<string, string>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q];
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const between: string[] = [];
        for (let u = v; u !== start; u = prev.get(u) as string) between.unshift(u);
        return [start, ...between, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...c, start];
}
