// `rig dev up|down|status`: a Temporal dev server (the `temporal` CLI from .venv) whose state lives in
// a SQLite file under state/temporal/, so workflows survive a restart of the server. `up` records what
// it started in a pid file; `down` stops only that process, after checking that the pid still belongs
// to a `temporal server start-dev` on the same database file (pids get reused). The CLI calls that are
// waited on go through runProgram (execa); the server itself is spawned detached and never waited on,
// so it stays a plain spawn.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stateDir } from '../lib/tools/paths';
import { runProgram } from '../lib/tools/run';
import { toolPath } from '../lib/tools/binaries';
import { portAnswers } from '../lib/tools/free-port';
import { RIG_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';


export interface DevServerOptions {
  ip: string;
  port: number;
  uiPort: number;
  /** Folder for the database, log and pid file (default <state>/temporal). */
  dir?: string;
  /** No Web UI (tests): one port fewer to race for with the server's own internal listeners. */
  headless?: boolean;
  /** `key=value` pairs for --dynamic-config-value (tests shorten the server's own intervals). */
  dynamicConfig?: string[];
}

export interface DevServerRecord {
  pid: number;
  address: string;
  ui: string;
  dbFile: string;
  logFile: string;
  startedAt: string;
}

export interface DevServerStatus {
  up: boolean;
  /** A server answers on the address but it is not the one `rig dev up` started. */
  foreign: boolean;
  record?: DevServerRecord;
  address: string;
}

function dirOf(opts: Pick<DevServerOptions, 'dir'>): string {
  return opts.dir ?? path.join(stateDir(), 'temporal');
}
function pidFile(dir: string): string {
  return path.join(dir, 'dev-server.json');
}

function readRecord(dir: string): DevServerRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(pidFile(dir), 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
}

/** True when pid is alive and is our start-dev on this database file. */
function isOurs(record: DevServerRecord): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${record.pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes('start-dev') && cmdline.includes(record.dbFile);
  } catch {
    return false;
  }
}

export async function devStatus(opts: DevServerOptions): Promise<DevServerStatus> {
  const dir = dirOf(opts);
  const record = readRecord(dir);
  const address = `${opts.ip}:${opts.port}`;
  if (record && isOurs(record)) {
    const [host, port] = record.address.split(':');
    return { up: await portAnswers(host, Number(port)), foreign: false, record, address: record.address };
  }
  return { up: false, foreign: await portAnswers(opts.ip, opts.port), address };
}

function searchAttributeFlags(): string[] {
  return RIG_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]);
}

/** Starts the dev server unless ours is already up. Returns the record and whether it was started now. */
export async function devUp(opts: DevServerOptions, log: (line: string) => void = () => {}): Promise<{ record: DevServerRecord; started: boolean }> {
  const status = await devStatus(opts);
  if (status.up && status.record) return { record: status.record, started: false };
  if (status.foreign) {
    throw new Error(
      `something else listens on ${status.address} (not started by \`rig dev up\`): ` +
        'use it with TEMPORAL_ADDRESS, or start ours elsewhere with --port',
    );
  }
  const dir = dirOf(opts);
  fs.mkdirSync(dir, { recursive: true });
  const dbFile = path.join(dir, 'dev.db');
  const logFile = path.join(dir, 'dev-server.log');
  const args = [
    'server', 'start-dev',
    '--db-filename', dbFile,
    '--ip', opts.ip,
    '--port', String(opts.port),
    ...(opts.headless ? ['--headless'] : ['--ui-port', String(opts.uiPort)]),
    '--log-level', 'warn',
    ...searchAttributeFlags(),
    ...(opts.dynamicConfig ?? []).flatMap((kv) => ['--dynamic-config-value', kv]),
  ];
  const out = fs.openSync(logFile, 'a');
  // Detached, in its own process group: the server outlives this command and a Ctrl-C in this shell.
  const child = spawn(toolPath('temporal'), args, { detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  // Exit is known from the child itself: /proc/<pid>/cmdline can still read as this process's own
  // for a moment after spawn on a loaded host, which once read as "exited" and left a server behind.
  let exited = false;
  child.once('exit', () => (exited = true));
  child.unref();
  const record: DevServerRecord = {
    pid: child.pid ?? -1,
    address: `${opts.ip}:${opts.port}`,
    ui: opts.headless ? 'none (headless)' : `http://${opts.ip}:${opts.uiPort}`,
    dbFile,
    logFile,
    startedAt: new Date().toISOString(),
  };
  fs.writeFileSync(pidFile(dir), JSON.stringify(record, null, 2));
  log(`starting Temporal dev server on ${record.address} (state in ${dbFile})`);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited) {
      fs.rmSync(pidFile(dir), { force: true });
      throw new Error(`the dev server exited during start-up; its log: ${logFile}\n${tail(logFile)}`);
    }
    if ((await portAnswers(opts.ip, opts.port)) && (await namespaceReady(record.address))) return { record, started: true };
    await new Promise((r) => setTimeout(r, 250));
  }
  // Not left behind: a server that never answered is stopped before the error (a caller may retry elsewhere).
  try {
    process.kill(-record.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  fs.rmSync(pidFile(dir), { force: true });
  throw new Error(`the dev server did not answer on ${record.address} within 60 s (stopped); its log: ${logFile}`);
}

async function namespaceReady(address: string): Promise<boolean> {
  try {
    await runProgram(toolPath('temporal'), ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', address], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Stops the server `up` started (and nothing else). Returns false when there was none. */
export async function devDown(opts: Pick<DevServerOptions, 'dir'>): Promise<boolean> {
  const dir = dirOf(opts);
  const record = readRecord(dir);
  if (!record) return false;
  if (!isOurs(record)) {
    fs.rmSync(pidFile(dir), { force: true });
    return false;
  }
  process.kill(record.pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && isOurs(record)) await new Promise((r) => setTimeout(r, 100));
  if (isOurs(record)) process.kill(record.pid, 'SIGKILL');
  fs.rmSync(pidFile(dir), { force: true });
  return true;
}
