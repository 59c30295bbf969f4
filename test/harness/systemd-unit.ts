// deploy/rig-worker@.service as systemd reads and runs it, for machines where systemd is not PID 1
// (this one: the tests run in a container). What it honours: the [Service] keys the unit uses, the %i
// specifier, Environment= and EnvironmentFile= (a leading `-`: optional), ${VAR} in ExecStart, and the
// restart rule of systemd.service(5): Restart=, RestartPreventExitStatus=, SuccessExitStatus=,
// RestartSec=. What it does not: User=/Group= (the process runs as the test), Limit*, KillMode (the
// test's worker starts nothing that outlives it), the start limit. Paths of the machine the unit
// names (/opt/rig-builds/<build>, /var/lib/rig, /etc/rig/worker.env) are mapped by the caller onto
// the test's own folders.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export interface ServiceUnit {
  /** Every key of [Unit] and [Service], in order (a key may repeat: Environment=). */
  entries: Array<{ section: string; key: string; value: string }>;
  get(section: string, key: string): string | undefined;
  all(section: string, key: string): string[];
}

/** systemd's unit file syntax (comments, sections, key=value; no line continuations in ours), %i expanded. */
export function parseServiceUnit(text: string, instance: string): ServiceUnit {
  const entries: ServiceUnit['entries'] = [];
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) {
      section = s[1];
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`not a key=value line in [${section}]: ${line}`);
    entries.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim().replace(/%i/g, instance).replace(/%%/g, '%') });
  }
  return {
    entries,
    get: (sec, key) => entries.filter((e) => e.section === sec && e.key === key).at(-1)?.value,
    all: (sec, key) => entries.filter((e) => e.section === sec && e.key === key).map((e) => e.value),
  };
}

/** How the main process ended: an exit code, or the signal that killed it. */
export type Ending = { code: number } | { signal: NodeJS.Signals };

const CLEAN_SIGNALS = new Set(['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGPIPE']);

function statusList(unit: ServiceUnit, key: string): Set<string> {
  return new Set(unit.all('Service', key).flatMap((v) => v.split(/\s+/).filter(Boolean)));
}

/**
 * Whether systemd restarts the service after its main process ended this way, not stopped by systemd
 * itself (systemd.service(5), Restart=: "clean" is exit 0, SIGHUP/SIGINT/SIGTERM/SIGPIPE, or a
 * SuccessExitStatus=; RestartPreventExitStatus= overrides every setting). Timeouts and the watchdog
 * are not modelled: the unit sets neither.
 */
export function restartsAfter(unit: ServiceUnit, end: Ending): boolean {
  const status = 'code' in end ? String(end.code) : end.signal;
  if (statusList(unit, 'RestartPreventExitStatus').has(status)) return false;
  if (statusList(unit, 'RestartForceExitStatus').has(status)) return true;
  const clean = 'code' in end ? end.code === 0 || statusList(unit, 'SuccessExitStatus').has(status) : CLEAN_SIGNALS.has(end.signal) || statusList(unit, 'SuccessExitStatus').has(status);
  const restart = unit.get('Service', 'Restart') ?? 'no';
  switch (restart) {
    case 'always':
      return true;
    case 'on-success':
      return clean;
    case 'on-failure':
      return !clean;
    case 'on-abnormal':
      return 'signal' in end && !CLEAN_SIGNALS.has(end.signal);
    case 'on-abort':
      return 'signal' in end && !CLEAN_SIGNALS.has(end.signal);
    case 'no':
      return false;
    default:
      throw new Error(`Restart=${restart}: not a value systemd knows`);
  }
}

/** systemd's RestartSec= (seconds, or with a unit: 500ms, 5s, 1min). */
export function restartSecMs(unit: ServiceUnit): number {
  const v = unit.get('Service', 'RestartSec') ?? '100ms';
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|min)?$/.exec(v);
  if (!m) throw new Error(`RestartSec=${v}: not understood here`);
  return Number(m[1]) * ({ ms: 1, s: 1000, sec: 1000, min: 60_000 } as Record<string, number>)[m[2] ?? 's'];
}

/** systemd's EnvironmentFile= lines: KEY=value, KEY="value"; # comments. */
function environmentFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(.*))\s*$/.exec(line);
    if (m) env[m[1]] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? m[4]);
  }
  return env;
}

/** The PATH systemd gives a service (its default, with no Environment=PATH). */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface Start {
  child: ChildProcess;
  ended: Promise<Ending>;
  /** What the service manager decided when it ended: restart, or leave it down. */
  decided: Promise<{ end: Ending; restart: boolean }>;
}

/**
 * One instance of a unit, supervised as systemd would: started by `start()` (systemctl start), each
 * end of its main process judged by the unit's restart rule and, when it says so, started again after
 * RestartSec=. `map` turns the machine's paths in the unit into the test's.
 */
export class UnitInstance {
  readonly starts: Start[] = [];
  private stopping = false;
  enabled = false;
  output = '';

  constructor(
    readonly unit: ServiceUnit,
    private readonly map: (machinePath: string) => string,
    private readonly extraEnv: Record<string, string> = {},
  ) {}

  /** systemctl is-active: active while its process runs (or a restart is pending), else inactive. */
  isActive(): 'active' | 'activating' | 'inactive' {
    const last = this.starts.at(-1);
    if (!last) return 'inactive';
    if (last.child.exitCode === null && last.child.signalCode === null) return 'active';
    return this.pendingRestart ? 'activating' : 'inactive';
  }

  private pendingRestart = false;

  start(): Start {
    const u = this.unit;
    const env: Record<string, string> = { PATH: SYSTEMD_PATH, LANG: 'C.UTF-8' };
    for (const f of u.all('Service', 'EnvironmentFile')) {
      const optional = f.startsWith('-');
      const file = this.map(optional ? f.slice(1) : f);
      if (!fs.existsSync(file)) {
        if (optional) continue;
        throw new Error(`EnvironmentFile=${f}: ${file} does not exist`);
      }
      Object.assign(env, environmentFile(file));
    }
    for (const e of u.all('Service', 'Environment')) {
      const eq = e.indexOf('=');
      env[e.slice(0, eq)] = this.map(e.slice(eq + 1));
    }
    Object.assign(env, this.extraEnv);
    const exec = u.get('Service', 'ExecStart');
    if (!exec) throw new Error('the unit has no ExecStart=');
    const argv = exec.split(/\s+/).map((w) => this.map(w.replace(/\$\{(\w+)\}/g, (_, k: string) => env[k] ?? '')));
    const cwd = this.map(u.get('Service', 'WorkingDirectory') ?? '/');
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (this.output += d));
    child.stderr!.on('data', (d: Buffer) => (this.output += d));
    const ended = new Promise<Ending>((resolve) => child.once('exit', (code, signal) => resolve(signal ? { signal } : { code: code ?? 0 })));
    const decided = ended.then((end) => {
      const restart = !this.stopping && restartsAfter(u, end);
      if (restart) {
        this.pendingRestart = true;
        setTimeout(() => {
          this.pendingRestart = false;
          if (!this.stopping) this.start();
        }, restartSecMs(u)).unref();
      }
      return { end, restart };
    });
    const s = { child, ended, decided };
    this.starts.push(s);
    return s;
  }

  /** systemctl stop: no restart after it; SIGKILL here (the test ends). */
  kill(): void {
    this.stopping = true;
    for (const s of this.starts) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  }
}
