// The spec's hash: what a baseline must share with the run it is compared with. Two runs of one
// schedule compare only if they ran the same spec (a schedule updated with another spec starts a new
// series). Over the spec as run (spec.json, defaults filled), keys sorted, without what names or
// points rather than measures: `$schema`, `baseline`, and `history` (the alert's floors: judging a
// history differently measures nothing differently).
import crypto from 'node:crypto';

const NOT_MEASURED = new Set(['$schema', 'baseline', 'history']);

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as Record<string, unknown>)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** sha256 of the canonical spec, first 16 hex characters. */
export function specHash(spec: Record<string, unknown>): string {
  const kept = Object.fromEntries(Object.entries(spec).filter(([k]) => !NOT_MEASURED.has(k)));
  return crypto.createHash('sha256').update(JSON.stringify(canonical(kept))).digest('hex').slice(0, 16);
}
