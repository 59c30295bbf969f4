// The ledger: what a local rig made, written BEFORE it is made. One JSON line per entry in
// <state>/ledger/<campaign>.jsonl, appended and fsynced, never rewritten. Teardown removes exactly the
// resources the ledger lists (intended and not yet removed); a crash at any point leaves a ledger that
// names everything that may exist, so the next teardown (or `rig check`) finds it.
import fs from 'node:fs';
import path from 'node:path';
import { closedLedgerDir, ledgerDir, rigPaths } from './rig-paths';

export type ResourceKind = 'rig-dir' | 'cluster' | 'service' | 'load-netns' | 'load-gateway' | 'load-worker';

/** What is known about one resource; each entry adds to it (a later value wins). */
export interface ResourceDetail {
  /** rig-dir: the folder; cluster: the cluster folder. */
  path?: string;
  /** cluster: the data folder (the postmaster runs with -D <dataDir>). */
  dataDir?: string;
  /** cluster: the folder with postgres and pg_ctl. */
  binDir?: string;
  /** cluster: its port; service: its HTTP port. */
  port?: number;
  /** cluster: the postmaster; service: the node process (also its process group). */
  pid?: number;
  /** service, load-gateway, load-worker: the script it runs (its /proc/<pid>/cmdline must contain it before it is signalled). */
  script?: string;
  /** service: the user's command (service.run.command), when it is not the reference service; its marker identifies it. */
  command?: string[];
  /** service: stdout+stderr. */
  logFile?: string;
  pidFile?: string;
  url?: string;
  note?: string;
  /** load-netns: the namespace, this machine's end of its veth pair, and the 10.231.S.0/24 it is on (load-netns.ts). */
  ns?: string;
  hostLink?: string;
  subnet?: number;
  node?: number;
}

export interface LedgerEntry {
  at: string;
  campaignId: string;
  op: 'intend' | 'made' | 'removed';
  /** Unique within the campaign: 'rig-dir', 'cluster', 'service-1', 'service-2', ... */
  id: string;
  kind: ResourceKind;
  detail: ResourceDetail;
}

export interface LedgerResource {
  id: string;
  kind: ResourceKind;
  campaignId: string;
  intendedAt: string;
  madeAt?: string;
  removedAt?: string;
  detail: ResourceDetail;
}

/** The ledger exists but cannot be read or parsed: nobody can say what the campaign made. */
export class LedgerUnreadableError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`ledger ${file} is unreadable: ${reason}. Inspect it by hand; teardown refuses to guess what it lists`);
  }
}

const OPS = new Set(['intend', 'made', 'removed']);
const KINDS = new Set(['rig-dir', 'cluster', 'service', 'load-netns', 'load-gateway', 'load-worker']);

/** Parse a ledger file; a missing file is an empty ledger. Throws LedgerUnreadableError on anything odd. */
export function readLedgerFile(file: string): LedgerEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return [];
    throw new LedgerUnreadableError(file, e.message);
  }
  const entries: LedgerEntry[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      // A torn last line (crash mid-append) is still unreadable: the intent it held is unknown.
      throw new LedgerUnreadableError(file, `line ${i + 1} is not JSON: ${line.slice(0, 80)}`);
    }
    const e = v as Partial<LedgerEntry>;
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.at !== 'string' ||
      typeof e.campaignId !== 'string' ||
      typeof e.id !== 'string' ||
      !OPS.has(String(e.op)) ||
      !KINDS.has(String(e.kind)) ||
      typeof e.detail !== 'object' ||
      e.detail === null
    ) {
      throw new LedgerUnreadableError(file, `line ${i + 1} is not a ledger entry (at, campaignId, op, id, kind, detail)`);
    }
    entries.push(e as LedgerEntry);
  });
  return entries;
}

export function readLedger(campaignId: string): LedgerEntry[] {
  return readLedgerFile(rigPaths(campaignId).ledgerFile);
}

/** Fold entries into resources, in the order they were first intended. */
export function foldLedger(entries: LedgerEntry[]): LedgerResource[] {
  const byId = new Map<string, LedgerResource>();
  for (const e of entries) {
    let r = byId.get(e.id);
    if (!r) {
      r = { id: e.id, kind: e.kind, campaignId: e.campaignId, intendedAt: e.at, detail: {} };
      byId.set(e.id, r);
    }
    r.detail = { ...r.detail, ...e.detail };
    if (e.op === 'made') r.madeAt = e.at;
    if (e.op === 'removed') r.removedAt = e.at;
    if (e.op === 'intend') {
      // intended again after removal (a rig re-made under the same id): live again
      r.removedAt = undefined;
    }
  }
  return [...byId.values()];
}

/** Resources intended and not removed: what teardown must remove. */
export function liveResources(campaignId: string): LedgerResource[] {
  return foldLedger(readLedger(campaignId)).filter((r) => !r.removedAt);
}

/** Append one entry and fsync it, so that it is on disk before the thing it announces is made. */
export function appendLedger(campaignId: string, op: LedgerEntry['op'], id: string, kind: ResourceKind, detail: ResourceDetail = {}): void {
  const file = rigPaths(campaignId).ledgerFile;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const entry: LedgerEntry = { at: new Date().toISOString(), campaignId, op, id, kind, detail };
  const fd = fs.openSync(file, 'a', 0o644);
  try {
    fs.writeSync(fd, JSON.stringify(entry) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Every campaign with a ledger file (open ledgers only; closed ones are history). */
export function ledgerCampaigns(): string[] {
  const dir = ledgerDir();
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.jsonl'))
    .map((d) => d.name.slice(0, -'.jsonl'.length));
}

/** Once nothing is live, the ledger moves to ledger/closed/<campaign>-<time>.jsonl. */
export function closeLedger(campaignId: string): string | undefined {
  const file = rigPaths(campaignId).ledgerFile;
  if (!fs.existsSync(file)) return undefined;
  if (liveResources(campaignId).length > 0) throw new Error(`ledger of ${campaignId} still lists live resources; not closing it`);
  fs.mkdirSync(closedLedgerDir(), { recursive: true });
  const dest = path.join(closedLedgerDir(), `${campaignId}-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
  fs.renameSync(file, dest);
  return dest;
}

/** The next free service id ('service-1', 'service-2', ...). */
export function nextServiceId(campaignId: string): string {
  const ids = foldLedger(readLedger(campaignId))
    .filter((r) => r.kind === 'service')
    .map((r) => Number(r.id.split('-')[1]) || 0);
  return `service-${Math.max(0, ...ids) + 1}`;
}
