// Folders the rig writes to. Everything generated lives under state/ (ignored by git) unless the
// user points elsewhere.
import path from 'node:path';

/** The repository root: this file is lib/tools/paths.ts. */
export const projectRoot = path.resolve(__dirname, '..', '..');

/** RIG_STATE_DIR, default <project>/state: dev server database, local rigs, ledgers. */
export function stateDir(): string {
  return path.resolve(process.env.RIG_STATE_DIR ?? path.join(projectRoot, 'state'));
}

/** RIG_RESULTS, default <state>/results: the evidence of every campaign. */
export function resultsDir(): string {
  return path.resolve(process.env.RIG_RESULTS ?? path.join(stateDir(), 'results'));
}
