// A PostgreSQL cluster the rig makes for itself: initdb into a folder, start on a free loopback port,
// stop, remove. Used by the local target (with the campaign's parameters) and by the tests (throw-away
// clusters). pg_ctl daemonizes the postmaster, so a cluster outlives the process that started it;
// `PgCluster.attach` finds it again from its folder. initdb, pg_ctl and the cluster's other binaries
// (pgbench, pg_waldump) run through runProgram (execa); only the exit handler's immediate stop stays
// on spawnSync, as nothing asynchronous runs there.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../tools/free-port';
import { runProgram, type RunOptions } from '../../tools/run';
import { isTesting } from '../../tools/test-switch';
import { withVerifyFull } from '../../pg/connection';
import { findPgBin, pgOsUser, type OsUser } from './pg-binaries';
import { createRdsAdmin, fidelityHba, refuseReservedSettings, tlsParameters } from './rds-fidelity';
import { makeClusterTls, type ClusterTls } from './test-ca';

export interface PgClusterOptions {
  /** Folder that will hold the cluster (data/, the log and the socket). Made if missing; must be empty. */
  dir: string;
  /** Port; default a free one. */
  port?: number;
  /** postgresql.conf parameters, e.g. { shared_buffers: '256MB' }. */
  parameters?: Record<string, string | number | boolean>;
  /** Superuser name (default `postgres`). */
  superuser?: string;
  /** When set, TCP connections need this password (scram-sha-256); otherwise loopback is trusted. */
  superuserPassword?: string;
  /**
   * Extra environment for the postmaster (kept in cluster.json, so a restart from another process sets
   * it too). The local rig puts its campaign marker here: the postmaster inherits it, and a scan of
   * /proc/<pid>/environ then tells a rig's postmaster from anyone else's, even with its folder gone.
   */
  env?: Record<string, string>;
  /**
   * RDS-fidelity mode (rds-fidelity.ts): TLS required with a test CA, hostssl lines only, and `admin`, a
   * non-superuser with CREATEROLE and CREATEDB, made beside the bootstrap superuser. With adminPassword
   * (and superuserPassword) every TCP login takes its password; without, TLS is still required but the
   * password is not checked: the AWS emulator's stand-in, whose master password moto makes.
   */
  rdsFidelity?: { admin: string; adminPassword?: string };
}

/** What is written to <dir>/cluster.json so that another process can find and stop the cluster. */
export interface PgClusterInfo {
  dir: string;
  dataDir: string;
  port: number;
  host: string;
  superuser: string;
  binDir: string;
  osUser?: string;
  createdAt: string;
  /** See PgClusterOptions.env. */
  env?: Record<string, string>;
  /** RDS-fidelity mode: the CA its clients verify against, and the non-superuser admin. */
  tls?: { caFile: string };
  admin?: string;
}

export class PgCluster {
  private constructor(
    readonly info: PgClusterInfo,
    private readonly user: OsUser | undefined,
  ) {}

  get port(): number {
    return this.info.port;
  }
  get host(): string {
    return this.info.host;
  }
  get dataDir(): string {
    return this.info.dataDir;
  }
  get binDir(): string {
    return this.info.binDir;
  }
  get logFile(): string {
    return path.join(this.info.dir, 'postgres.log');
  }

  /**
   * A libpq URL for a database (default `postgres`) as the superuser (or `user`); in RDS-fidelity mode
   * with sslmode=verify-full against the cluster's test CA (lib/pg/connection.ts reads both).
   */
  url(database = 'postgres', user = this.info.superuser, password?: string): string {
    const auth = password ? `${encodeURIComponent(user)}:${encodeURIComponent(password)}` : encodeURIComponent(user);
    const url = `postgres://${auth}@${this.info.host}:${this.info.port}/${database}`;
    return this.info.tls ? withVerifyFull(url, this.info.tls.caFile) : url;
  }

  /** initdb + start. Throws with initdb's or pg_ctl's own output on failure. */
  static async create(opts: PgClusterOptions): Promise<PgCluster> {
    const binDir = findPgBin();
    const user = pgOsUser();
    const dir = path.resolve(opts.dir);
    fs.mkdirSync(dir, { recursive: true });
    const dataDir = path.join(dir, 'data');
    if (fs.existsSync(dataDir)) throw new Error(`${dataDir} exists already: a cluster folder is never reused`);
    if (user) fs.chownSync(dir, user.uid, user.gid);
    const superuser = opts.superuser ?? 'postgres';
    if (opts.rdsFidelity?.adminPassword && !opts.superuserPassword) throw new Error('PgCluster: rdsFidelity with an adminPassword needs superuserPassword (every TCP login takes a password there)');
    await initdb({ binDir, dataDir, superuser, password: opts.superuserPassword || undefined, user });
    const info: PgClusterInfo = {
      dir,
      dataDir,
      port: opts.port ?? (await freePort()),
      host: '127.0.0.1',
      superuser,
      binDir,
      osUser: user?.name,
      createdAt: new Date().toISOString(),
      ...(opts.env ? { env: opts.env } : {}),
    };
    let tls: ClusterTls | undefined;
    if (opts.rdsFidelity) {
      // A cluster's own settings: RDS keeps them for itself, and so does fidelity mode.
      refuseReservedSettings(opts.parameters ?? {});
      // The CA's name says whose it is: the campaign (a rig's cluster folder is <rig>/pg) or the folder.
      const label = path.basename(dir) === 'pg' ? path.basename(path.dirname(dir)) : path.basename(dir);
      tls = await makeClusterTls(path.join(dir, 'tls'), { label, user });
      fs.writeFileSync(path.join(dataDir, 'pg_hba.conf'), fidelityHba(opts.rdsFidelity.adminPassword ? 'scram-sha-256' : 'trust'));
      if (user) fs.chownSync(path.join(dataDir, 'pg_hba.conf'), user.uid, user.gid);
      info.tls = { caFile: tls.caFile };
      info.admin = opts.rdsFidelity.admin;
    }
    const conf = {
      listen_addresses: '127.0.0.1',
      port: info.port,
      unix_socket_directories: dir,
      fsync: true,
      // The markers tail attribution reads (lib/protocol/postgres-log.ts), the same on every target: each
      // vacuum/analyze pass and checkpoint logged, stamped in UTC (initdb would take the host's zone,
      // whose abbreviations a stamp alone cannot place). A caller's parameters may still say otherwise.
      log_autovacuum_min_duration: 0,
      log_checkpoints: 'on',
      log_timezone: 'UTC',
      ...opts.parameters,
      ...(tls ? tlsParameters(tls) : {}),
    };
    fs.appendFileSync(
      path.join(dataDir, 'postgresql.conf'),
      '\n# --- set by the rig ---\n' +
        Object.entries(conf)
          .map(([k, v]) => `${k} = ${typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v)}`)
          .join('\n') +
        '\n',
    );
    fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify(info, null, 2));
    const cluster = new PgCluster(info, user);
    await cluster.start();
    if (opts.rdsFidelity) await createRdsAdmin(cluster.url('postgres', superuser, opts.superuserPassword), opts.rdsFidelity.admin, opts.rdsFidelity.adminPassword);
    return cluster;
  }

  /** Find a cluster made earlier (possibly by another process) from its folder. */
  static attach(dir: string): PgCluster {
    const info = JSON.parse(fs.readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as PgClusterInfo;
    return new PgCluster(info, pgOsUser());
  }

  async start(): Promise<void> {
    await run(path.join(this.binDir, 'pg_ctl'), ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '60', 'start'], this.user, {
      env: { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C', ...this.info.env },
    });
  }

  /** True when the postmaster named by postmaster.pid is alive. */
  isRunning(): boolean {
    return this.postmasterPid() !== undefined;
  }

  postmasterPid(): number | undefined {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  /** Stop (fast shutdown). Idempotent. */
  async stop(): Promise<void> {
    if (!this.isRunning()) return;
    await run(path.join(this.binDir, 'pg_ctl'), ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'], this.user);
  }

  /** Synchronous immediate stop, for process-exit handlers where nothing async runs. */
  stopSync(): void {
    if (!this.isRunning()) return;
    spawnSync(path.join(this.binDir, 'pg_ctl'), ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop'], {
      stdio: 'ignore',
      ...(this.user ? { uid: this.user.uid, gid: this.user.gid } : {}),
    });
  }

  /** Stop, then delete the folder. Idempotent. */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.info.dir, { recursive: true, force: true });
  }

  /** Run a binary from the cluster's bin folder as the cluster's OS user (pgbench, psql, ...). */
  exec(binary: string, args: string[], options: Pick<RunOptions, 'env'> = {}): Promise<{ stdout: string; stderr: string }> {
    return run(path.join(this.binDir, binary), args, this.user, options);
  }
}

interface InitdbArgs {
  binDir: string;
  dataDir: string;
  superuser: string;
  /** The superuser's password (scram-sha-256 over TCP); none: loopback TCP is trusted. */
  password?: string;
  user: OsUser | undefined;
}

/** initdb's arguments but the data folder and the password file. */
function initdbArgs(a: Pick<InitdbArgs, 'superuser' | 'password'>): string[] {
  return ['-U', a.superuser, '-E', 'UTF8', '--locale=C', '--auth-local=trust', '--no-sync', a.password !== undefined ? '--auth-host=scram-sha-256' : '--auth-host=trust'];
}

/** initdb into `dataDir`, the password (if any) from a file beside it that only the OS user reads. */
async function initdbAt(a: InitdbArgs): Promise<void> {
  const args = ['-D', a.dataDir, ...initdbArgs(a)];
  let pwFile: string | undefined;
  if (a.password !== undefined) {
    pwFile = path.join(path.dirname(a.dataDir), '.pw');
    fs.writeFileSync(pwFile, a.password + '\n', { mode: 0o600 });
    if (a.user) fs.chownSync(pwFile, a.user.uid, a.user.gid);
    args.push(`--pwfile=${pwFile}`);
  }
  try {
    await run(path.join(a.binDir, 'initdb'), args, a.user);
  } finally {
    if (pwFile) fs.rmSync(pwFile, { force: true });
  }
}

/**
 * A new cluster's data folder. With RIG_PG_INITDB_CACHE naming a folder (`npm test` names one per
 * run, scripts/run-tests.cjs), the first cluster of a kind (binaries, OS user, superuser, password or not)
 * runs initdb into that folder, and every later one copies it (`cp -a`, as the OS user) instead of
 * running initdb again: initdb costs 0.8-1.6 s of CPU here, a copy with its password 0.2-0.9 s (most of
 * it the kernel writing the 39 MB), and the suite makes a cluster for nearly every campaign. A
 * password is set on the copy in single-user mode, as initdb itself sets it, and the copy's statistics
 * file put back to initdb's (restoreTemplateStats). What a copy shares with its template is initdb's system identifier
 * (pg_control_system()), the same for every cluster of the run. Without the variable (the rig, every
 * user, and anywhere outside RIG_TESTING=1), with it `off`, or if anything about the copy fails, plain initdb as before.
 */
async function initdb(a: InitdbArgs): Promise<void> {
  // Under the test suite only (RIG_TESTING=1): a user's cluster is always made by its own initdb, with its own
  // system identifier; elsewhere the variable is quietly ignored (it changes no verdict).
  const cache = isTesting() ? process.env.RIG_PG_INITDB_CACHE : undefined;
  // A password is handed to single-user mode on one line, ended by its newline.
  if (!cache || cache === 'off' || (a.password !== undefined && /[\n\r\0]/.test(a.password))) return initdbAt(a);
  try {
    const template = await initdbTemplate(cache, a);
    await run('cp', ['-a', template, a.dataDir], a.user);
    if (a.password !== undefined) {
      await setPasswordSingleUser(a, a.password);
      await restoreTemplateStats(template, a);
    }
  } catch (err) {
    console.error(`initdb cache (${cache}) not used: ${(err as Error).message}`);
    fs.rmSync(a.dataDir, { recursive: true, force: true });
    await initdbAt(a);
  }
}

/** The template data folder of this kind in the cache, made now by initdb if no process made it yet. */
async function initdbTemplate(cache: string, a: InitdbArgs): Promise<string> {
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify({ binDir: a.binDir, user: a.user?.name ?? null, args: initdbArgs(a) }))
    .digest('hex')
    .slice(0, 16);
  const template = path.join(cache, key);
  if (fs.existsSync(path.join(template, 'PG_VERSION'))) return template;
  fs.mkdirSync(cache, { recursive: true, mode: 0o755 });
  // Made beside and renamed into place: a template is whole or absent. Files starting side by side may
  // each make one; the first rename wins and the others' copies are dropped.
  const making = fs.mkdtempSync(path.join(cache, `${key}.making-`));
  try {
    fs.chmodSync(making, 0o755);
    if (a.user) fs.chownSync(making, a.user.uid, a.user.gid);
    // A placeholder password (each copy gets its own): the template only fixes the auth method.
    await initdbAt({ ...a, dataDir: path.join(making, 'data'), password: a.password === undefined ? undefined : crypto.randomBytes(16).toString('hex') });
    try {
      fs.renameSync(path.join(making, 'data'), template);
    } catch (err) {
      if (!fs.existsSync(path.join(template, 'PG_VERSION'))) throw err;
    }
  } finally {
    fs.rmSync(making, { recursive: true, force: true });
  }
  return template;
}

/**
 * The copy's statistics file put back to the template's (initdb's own), after the single-user session
 * that set the password rewrote it. That session's statistics gave the file an entry for the `postgres`
 * database beside template1's, and the server reads the file at start: its autovacuum launcher then
 * spread two databases over autovacuum_naptime and analyzed template1's catalogs (about 240 kB of WAL)
 * half a naptime after start, where a cluster made by initdb does it a whole naptime after. With the
 * local rig's 15-s naptime that fell inside wal-bracket.test.ts's window, and pg_stat_wal, which counts
 * the whole cluster, read 926 B per event against pg_waldump's 807 B over the window's own LSN range.
 * With initdb's file the copy starts as the cluster initdb would have made.
 */
async function restoreTemplateStats(template: string, a: InitdbArgs): Promise<void> {
  const statsFile = path.join('pg_stat', 'pgstat.stat');
  if (fs.existsSync(path.join(template, statsFile))) await run('cp', ['-p', path.join(template, statsFile), path.join(a.dataDir, statsFile)], a.user);
  else fs.rmSync(path.join(a.dataDir, statsFile), { force: true });
}

/** ALTER ROLE … PASSWORD in single-user mode (no server, no connection), as initdb's --pwfile does it. */
async function setPasswordSingleUser(a: InitdbArgs, password: string): Promise<void> {
  const role = `"${a.superuser.replace(/"/g, '""')}"`;
  const { stdout, stderr } = await runProgram(path.join(a.binDir, 'postgres'), ['--single', '-D', a.dataDir, 'postgres'], {
    cwd: os.tmpdir(),
    env: { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C' },
    input: `ALTER ROLE ${role} PASSWORD '${password.replace(/'/g, "''")}'\n`,
    ...(a.user ? { uid: a.user.uid, gid: a.user.gid } : {}),
  });
  const out = `${stdout}\n${stderr}`;
  if (/\b(ERROR|FATAL|PANIC):/.test(out)) throw new Error(`setting the superuser's password failed: ${out.trim().split('\n').filter((l) => /ERROR|FATAL|PANIC/.test(l)).join('; ')}`);
}

/** Runs a cluster binary as the cluster's OS user; a failure throws with the binary's own output. */
function run(file: string, args: string[], user: OsUser | undefined, options: Pick<RunOptions, 'env'> = {}): Promise<{ stdout: string; stderr: string }> {
  return runProgram(file, args, {
    // The OS user needs a HOME and a cwd it can read; /tmp is both.
    cwd: os.tmpdir(),
    env: options.env ?? { ...process.env, HOME: os.tmpdir(), LC_ALL: 'C' },
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
}
