// Reading a secret from where the spec says it is (lib/protocol/existing-spec.ts SecretSource): an
// environment variable of this worker, or a file on this host. Only the process that connects calls
// readSecret, and what it returns is never logged, returned from an activity or written to evidence.
// checkSecretSources runs at the campaign's opening, so a missing variable or file stops the campaign
// before anything is measured, with the field and the fix.
import fs from 'node:fs';
import type { SecretSource } from '../protocol/existing-spec';

/** Why `field` cannot be read on this host, or null when it can (the value is looked at, never shown). */
export function secretSourceProblem(field: string, source: SecretSource, env: NodeJS.ProcessEnv = process.env): string | null {
  if ('env' in source) {
    const v = env[source.env];
    if (v === undefined || v.trim() === '') {
      return `${field}: the environment variable ${source.env} is not set in the worker's environment: export it where \`rig worker\` runs (it holds the URL with its password)`;
    }
    return null;
  }
  let text: string;
  try {
    text = fs.readFileSync(source.file, 'utf8');
  } catch (err) {
    return `${field}: the file ${source.file} cannot be read on this host (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): write the URL into it, mode 0600`;
  }
  const mode = fs.statSync(source.file).mode & 0o777;
  if (mode & 0o077) return `${field}: ${source.file} has mode ${mode.toString(8)}: a file holding a password must be 0600 (chmod 600 it)`;
  if (!text.trim()) return `${field}: ${source.file} is empty: write the URL into it`;
  return null;
}

/** The secret itself (trimmed); throws with the field and the fix when it cannot be read. */
export function readSecret(field: string, source: SecretSource): string {
  const problem = secretSourceProblem(field, source);
  if (problem) throw new Error(problem);
  return ('env' in source ? process.env[source.env]! : fs.readFileSync(source.file, 'utf8')).trim();
}

/** Every problem of several sources at once (the campaign's opening lists them all). */
export function secretSourcesProblems(sources: Array<[field: string, source: SecretSource | undefined]>): string[] {
  return sources.flatMap(([field, source]) => {
    const p = source ? secretSourceProblem(field, source) : null;
    return p ? [p] : [];
  });
}
