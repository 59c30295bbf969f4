// manifest.json: size and sha256 of every evidence file, so that a published figure can be traced to
// bytes that have not changed since the campaign ended. The report refuses to run when any file
// differs, and names it.
//
// What is listed: every regular file under the campaign folder, except manifest.json itself, the
// report files (report.md/.html/.json: they are DERIVED from the listed files, and the page names the
// manifest's own sha256 instead), history-acks.json (a person's acknowledgement of a change, written
// after the seal: `rig history ack`), and temporary files of a writer that crashed mid-write.
//
// campaign.log is append-only and may legitimately grow after the manifest (a follower, the report
// step's own last line): its entry is checked as a PREFIX (the first `size` bytes must hash to
// `sha256`), and readers use exactly that prefix. Rewriting any earlier byte is still caught.
//
// The manifest holds no time and lists files in code-point order of their paths: the same evidence
// always gives the same manifest, byte for byte.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeAtomic, isTempName } from './atomic';
import { HISTORY_ACKS_FILE, LOG_FILE, MANIFEST_FILE, REPORT_FILES } from './layout';

export const MANIFEST_FORMAT = 'rig-evidence-manifest/1';

export interface ManifestEntry {
  /** Relative to the campaign folder, '/' separators. */
  path: string;
  size: number;
  sha256: string;
  /** campaign.log: verified as a prefix (the file may have grown since). */
  append_only?: true;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  files: ManifestEntry[];
}

export interface ManifestCheck {
  ok: boolean;
  /** Listed files whose bytes differ (sha256 or size). */
  mismatched: string[];
  /** Listed files that are gone. */
  missing: string[];
  /** Files present but not listed (ignored by the report; named so nobody thinks they were used). */
  unlisted: string[];
  /** One sentence per problem, naming the file. */
  problems: string[];
}

export class EvidenceIntegrityError extends Error {
  constructor(
    readonly dir: string,
    readonly files: string[],
    readonly problems: string[],
  ) {
    super(`evidence in ${dir} does not match its manifest; nothing is reported from it:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EvidenceIntegrityError';
  }
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Relative paths of the files a manifest covers, sorted. */
export function listEvidenceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string) => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(abs, e.name), r);
      else if (e.isFile() && !isTempName(e.name) && r !== MANIFEST_FILE && r !== HISTORY_ACKS_FILE && !(REPORT_FILES as readonly string[]).includes(r)) out.push(r);
    }
  };
  walk(dir, '');
  return out.sort(byPath);
}

export async function fileDigest(file: string, limit = Infinity): Promise<{ size: number; sha256: string }> {
  const h = crypto.createHash('sha256');
  let size = 0;
  if (limit <= 0) return { size, sha256: h.digest('hex') };
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20, ...(Number.isFinite(limit) ? { end: limit - 1 } : {}) });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    h.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: h.digest('hex') };
}

/** Writes manifest.json (atomically, replacing a previous one) and returns it. */
export async function buildManifest(dir: string): Promise<Manifest> {
  const files: ManifestEntry[] = [];
  for (const rel of listEvidenceFiles(dir)) {
    const d = await fileDigest(path.join(dir, ...rel.split('/')));
    files.push(rel === LOG_FILE ? { path: rel, size: d.size, sha256: d.sha256, append_only: true } : { path: rel, ...d });
  }
  const manifest: Manifest = { format: MANIFEST_FORMAT, files };
  writeAtomic(path.join(dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

/** Reads and checks the shape of manifest.json; throws naming what is wrong. */
export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new EvidenceIntegrityError(dir, [MANIFEST_FILE], [
      `${MANIFEST_FILE} is missing: the evidence was never sealed (the campaign's report step builds it; \`rig report --seal\` builds it for a campaign that stopped before)`,
    ]);
  }
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch (err) {
    throw new EvidenceIntegrityError(dir, [MANIFEST_FILE], [`${MANIFEST_FILE} is not JSON: ${(err as Error).message}`]);
  }
  if (m?.format !== MANIFEST_FORMAT || !Array.isArray(m.files)) {
    throw new EvidenceIntegrityError(dir, [MANIFEST_FILE], [`${MANIFEST_FILE} is not a rig manifest (format '${String(m?.format)}', expected '${MANIFEST_FORMAT}')`]);
  }
  for (const [i, e] of m.files.entries()) {
    if (typeof e?.path !== 'string' || !Number.isInteger(e.size) || !/^[0-9a-f]{64}$/.test(String(e.sha256)) || e.path.split('/').includes('..') || path.isAbsolute(e.path)) {
      throw new EvidenceIntegrityError(dir, [MANIFEST_FILE], [`${MANIFEST_FILE}: files[${i}] is not {path, size, sha256} with a relative path`]);
    }
  }
  return m;
}

/** Re-hashes every listed file; names each one that is missing or differs. */
export async function verifyManifest(dir: string): Promise<ManifestCheck> {
  const m = readManifest(dir);
  const mismatched: string[] = [];
  const missing: string[] = [];
  const problems: string[] = [];
  for (const e of m.files) {
    const abs = path.join(dir, ...e.path.split('/'));
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch {
      missing.push(e.path);
      problems.push(`${e.path}: listed in the manifest but missing`);
      continue;
    }
    if (e.append_only ? st.size < e.size : st.size !== e.size) {
      mismatched.push(e.path);
      problems.push(`${e.path}: size ${st.size} bytes, the manifest says ${e.size}${e.append_only ? ' (an append-only file cannot shrink)' : ''}`);
      continue;
    }
    const d = await fileDigest(abs, e.append_only ? e.size : Infinity);
    if (d.sha256 !== e.sha256) {
      mismatched.push(e.path);
      problems.push(`${e.path}: sha256 ${d.sha256} does not match the manifest's ${e.sha256}${e.append_only ? ' (over its first ' + e.size + ' bytes)' : ''}`);
    }
  }
  const listed = new Set(m.files.map((e) => e.path));
  const unlisted = listEvidenceFiles(dir).filter((p) => !listed.has(p));
  return { ok: mismatched.length === 0 && missing.length === 0, mismatched, missing, unlisted, problems };
}

/** verifyManifest, throwing EvidenceIntegrityError (naming every bad file) unless all listed files match. */
export async function assertManifest(dir: string): Promise<{ manifest: Manifest; check: ManifestCheck }> {
  const manifest = readManifest(dir);
  const check = await verifyManifest(dir);
  if (!check.ok) throw new EvidenceIntegrityError(dir, [...check.mismatched, ...check.missing], check.problems);
  return { manifest, check };
}
