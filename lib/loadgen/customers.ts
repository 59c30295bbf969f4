// The customers events are spread over: from a file (--customers FILE) or from the target's own
// customer list. The wire contract does not fix the list's shape, so the common ones are accepted:
// an array, or {data|customers|items: [...]}, of strings or of objects with external_id (else id).
import fs from 'node:fs';

/** A file of one id per line (blank lines and #comments ignored), or a JSON array / list response. */
export function readCustomersFile(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--customers ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a file of customer external ids, one per line`);
  }
  const t = text.trim();
  let ids: string[];
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      ids = customersFromListResponse(JSON.parse(t));
    } catch (err) {
      throw new Error(`--customers ${file}: not valid JSON (${(err as Error).message}): give a JSON array of ids, or one id per line`);
    }
  } else {
    ids = t
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
  }
  if (ids.length === 0) throw new Error(`--customers ${file}: no customer ids in it: give one external id per line`);
  return ids;
}

export function customersFromListResponse(body: unknown): string[] {
  const list = Array.isArray(body)
    ? body
    : body && typeof body === 'object'
      ? ((body as Record<string, unknown>).data ?? (body as Record<string, unknown>).customers ?? (body as Record<string, unknown>).items)
      : undefined;
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const item of list) {
    if (typeof item === 'string' && item) out.push(item);
    else if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      const id = o.external_id ?? o.id;
      if (typeof id === 'string' && id) out.push(id);
    }
  }
  return out;
}
