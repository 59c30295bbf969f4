// Is anything of a local rig left? Looks in three independent places, so that losing one (a ledger
// deleted by hand, a folder removed under a running postmaster) still shows the others:
//   1. open ledgers under <state>/ledger: every resource intended and not removed;
//   2. rig folders under <state>/rigs;
//   3. live processes carrying the rig's marker (any state folder: postmasters and services), and
//      whether the ports the ledgers recorded still answer.
// 'clean' only when all three looked and found nothing. Anything that stops a look is 'could-not-look'
// with the reason: never a false clean.
import fs from 'node:fs';
import path from 'node:path';
import { portAnswers } from '../../tools/free-port';
import { stateDir } from '../../tools/paths';
import { testOnlySwitch, TestSwitchRefusal } from '../../tools/test-switch';
import type { CleanCheckResult, Leftover } from '../target';
import { foldLedger, LedgerUnreadableError, readLedgerFile } from './ledger';
import { looksLikeService, parentPid, postmasterDataDir, scanMarkedProcesses, type ProcessScan } from './proc';
import { ledgerDir, rigsDir } from './rig-paths';

class CouldNotLook extends Error {}

/** The ledger ids a service gets (ledger.ts nextServiceId; the emulated aws app node's). */
function isServiceResource(resourceId: string): boolean {
  return /^service-\d+$/.test(resourceId) || resourceId === 'aws-app-service';
}

/** What this clean check can report (the local target's Target.leftoverKinds). */
export const LOCAL_LEFTOVER_KINDS = ['ledger-entry', 'postmaster', 'service', 'rig-folder', 'listening-port', 'process'] as const;
type LocalLeftover = Leftover & { kind: (typeof LOCAL_LEFTOVER_KINDS)[number] };

function ageSeconds(since: Date | string | number | undefined, now: number): number | undefined {
  if (since === undefined) return undefined;
  const t = new Date(since).getTime();
  return Number.isFinite(t) ? Math.max(0, Math.round((now - t) / 1000)) : undefined;
}

/** readdir that tells "absent" (undefined) from "cannot look" (throws CouldNotLook). */
function listDir(dir: string, what: string): fs.Dirent[] | undefined {
  try {
    const st = fs.statSync(dir);
    if (!st.isDirectory()) throw new CouldNotLook(`${what} ${dir} is not a folder`);
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err instanceof CouldNotLook) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return undefined;
    throw new CouldNotLook(`${what} ${dir} is unreadable: ${e.message}`);
  }
}

export interface CleanCheckOptions {
  /**
   * 'machine' (default): every marked process on the machine counts, whatever state folder it came
   * from: a leftover is a leftover. 'state': only processes whose rig folder is under this state
   * folder (RIG_STATE_DIR), for a test or a developer sharing the machine with other rigs.
   * Unset, RIG_CLEAN_CHECK_SCOPE=state chooses 'state': `npm test` sets it for the files it runs side
   * by side (each has its own RIG_STATE_DIR), so that one file's live rig is not another's leftover.
   * It is honoured only there (RIG_TESTING=1): set outside the test suite, the check could not look
   * (it names the variable), since a campaign's "clean" would then rest on a narrowed scan.
   */
  scope?: 'machine' | 'state';
}

export const CLEAN_CHECK_SCOPE_ENV = 'RIG_CLEAN_CHECK_SCOPE';

/** The scope when none is given: the machine, or RIG_CLEAN_CHECK_SCOPE=state under the test suite (throws TestSwitchRefusal outside it). */
export function defaultScope(env: NodeJS.ProcessEnv = process.env): 'machine' | 'state' {
  const asked = testOnlySwitch(CLEAN_CHECK_SCOPE_ENV, "narrows the processes this clean check counts to this state folder's, so a rig of another state folder is not a leftover", env);
  return asked === 'state' ? 'state' : 'machine';
}

export async function cleanCheckLocal(opts: CleanCheckOptions = {}): Promise<CleanCheckResult> {
  let scope: 'machine' | 'state';
  try {
    scope = opts.scope ?? defaultScope();
  } catch (err) {
    // Nothing was looked at: never a clean (nor a dirty) that the narrowed scan would have decided.
    if (err instanceof TestSwitchRefusal) return { status: 'could-not-look', reason: err.message, leftovers: [] };
    throw err;
  }
  const now = Date.now();
  const leftovers: LocalLeftover[] = [];
  const looked: string[] = [];
  try {
    // The state folder itself: a file where a folder should be, or no permission, means we cannot look.
    const sd = stateDir();
    const top = listDir(sd, 'state folder');
    looked.push(top ? `state folder ${sd}` : `state folder ${sd} (absent)`);

    // 1. ledgers
    const ports: Array<{ campaignId: string; resource: string; port: number; kind: string }> = [];
    const ledgers = top ? listDir(ledgerDir(), 'ledger folder') : undefined;
    for (const d of ledgers ?? []) {
      if (!d.name.endsWith('.jsonl')) continue;
      if (!d.isFile()) throw new CouldNotLook(`ledger ${path.join(ledgerDir(), d.name)} is not a file`);
      const file = path.join(ledgerDir(), d.name);
      let entries;
      try {
        entries = readLedgerFile(file);
      } catch (err) {
        if (err instanceof LedgerUnreadableError) throw new CouldNotLook(err.message);
        throw err;
      }
      for (const r of foldLedger(entries)) {
        if (r.removedAt) continue;
        const where = r.detail.pid ? `pid ${r.detail.pid}` : (r.detail.dataDir ?? r.detail.path ?? '');
        leftovers.push({
          kind: 'ledger-entry',
          campaignId: r.campaignId,
          ageSeconds: ageSeconds(r.intendedAt, now),
          detail: `${r.id} (${r.kind}${where ? `, ${where}` : ''}${r.detail.port ? `, port ${r.detail.port}` : ''}) listed in ${file}, not removed`,
        });
        if (r.detail.port) ports.push({ campaignId: r.campaignId, resource: r.id, port: r.detail.port, kind: r.kind });
      }
    }
    looked.push(ledgers ? `${ledgers.filter((d) => d.name.endsWith('.jsonl')).length} open ledgers in ${ledgerDir()}` : `ledger folder ${ledgerDir()} (absent)`);

    // 2. rig folders
    const rigs = top ? listDir(rigsDir(), 'rigs folder') : undefined;
    for (const d of rigs ?? []) {
      const dir = path.join(rigsDir(), d.name);
      let created: string | number | undefined;
      try {
        created = (JSON.parse(fs.readFileSync(path.join(dir, 'rig.json'), 'utf8')) as { createdAt?: string }).createdAt;
      } catch {
        try {
          created = fs.statSync(dir).mtimeMs;
        } catch {
          created = undefined;
        }
      }
      leftovers.push({ kind: 'rig-folder', campaignId: d.name, ageSeconds: ageSeconds(created, now), detail: `rig folder ${dir}` });
    }
    looked.push(rigs ? `${rigs.length} folders in ${rigsDir()}` : `rigs folder ${rigsDir()} (absent)`);

    // 3. processes (all of the machine's, by marker) and ports
    let scan: ProcessScan;
    try {
      scan = scanMarkedProcesses();
    } catch (err) {
      throw new CouldNotLook(`cannot list processes in /proc: ${(err as Error).message}`);
    }
    const answered = new Set<string>();
    for (const p of ports) {
      if (await portAnswers('127.0.0.1', p.port)) answered.add(`${p.campaignId}/${p.resource}`);
    }
    if (scope === 'state') {
      const under = rigsDir() + path.sep;
      scan.marked = scan.marked.filter((p) => p.rigDir.startsWith(under));
    }
    for (const p of scan.marked) {
      const dataDir = postmasterDataDir(p.cmdline);
      const ppid = parentPid(p.pid);
      const parent = scan.marked.find((m) => m.pid === ppid);
      // A user's command (service.run) has no script of ours in its argv: its marker's resource id says
      // it is the service (its children inherit the marker, and have a marked parent).
      const kind = dataDir ? 'postmaster' : looksLikeService(p.cmdline) || (isServiceResource(p.resourceId) && !parent) ? 'service' : 'process';
      const port = ports.find((x) => x.campaignId === p.campaignId && x.resource === p.resourceId);
      const listening = port && answered.has(`${p.campaignId}/${p.resourceId}`) ? `, listening on 127.0.0.1:${port.port}` : '';
      if (parent && kind === 'process') {
        // a helper the service started (tsx's esbuild): it goes with its parent's process group
        leftovers.push({ kind, campaignId: p.campaignId, ageSeconds: ageSeconds(p.startedAt, now), detail: `process pid ${p.pid} (${p.cmdline[0]}), child of pid ${parent.pid} (${p.resourceId})` });
        continue;
      }
      leftovers.push({
        kind,
        campaignId: p.campaignId,
        ageSeconds: ageSeconds(p.startedAt, now),
        detail: `${kind} pid ${p.pid} (${p.resourceId})${dataDir ? ` on ${dataDir}` : ''}${listening}, rig folder ${p.rigDir}`,
      });
    }
    for (const p of ports) {
      const key = `${p.campaignId}/${p.resource}`;
      const seen = scan.marked.some((m) => `${m.campaignId}/${m.resourceId}` === key);
      if (answered.has(key) && !seen) {
        leftovers.push({
          kind: 'listening-port',
          campaignId: p.campaignId,
          detail: `127.0.0.1:${p.port} answers (recorded for ${p.resource}, a ${p.kind}; no marked process found for it)`,
        });
      }
    }
    // Unmarked-looking candidates we could not look into: a postmaster on one of our rig folders is ours.
    for (const u of scan.unreadable) {
      const dataDir = postmasterDataDir(u.cmdline);
      if (dataDir && dataDir.startsWith(rigsDir() + path.sep)) {
        leftovers.push({ kind: 'postmaster', campaignId: path.relative(rigsDir(), dataDir).split(path.sep)[0], detail: `postmaster pid ${u.pid} on ${dataDir}` });
      } else if (!dataDir) {
        throw new CouldNotLook(
          `cannot read the environment of pid ${u.pid} (${u.cmdline.join(' ').slice(0, 100)}) to tell whether it is a rig's service: run rig check as root or as that process's user`,
        );
      }
    }
    looked.push(`${scan.marked.length} marked processes in /proc${scope === 'state' ? ` with a rig folder under ${rigsDir()}` : ''}`);
  } catch (err) {
    if (err instanceof CouldNotLook) return { status: 'could-not-look', reason: err.message, leftovers };
    return { status: 'could-not-look', reason: `unexpected error: ${(err as Error).message}`, leftovers };
  }
  return leftovers.length ? { status: 'dirty', leftovers, looked } : { status: 'clean', looked };
}
