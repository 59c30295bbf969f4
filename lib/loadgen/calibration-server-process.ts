// The parent's handle on the calibration server, which runs in a process of its own
// (calibration-server-main.ts; why: see there). Requests and answers go over IPC; the truth of each
// ingest request comes back as rows of the server's own clock.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Behaviour, Tally, TruthRow } from './calibration-server';
import type { ServerRequest } from './calibration-server-main';

const MAIN = path.join(__dirname, 'calibration-server-main.ts');
const TSX_CJS = require.resolve('tsx/cjs');

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

export class CalibrationServerProcess {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exited: Error | null = null;
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** Spawns the server process and resolves once it listens (its URL on 127.0.0.1 and a free port). */
  static start(opts: { apiKey: string; customers: string[] }): Promise<CalibrationServerProcess> {
    const child = spawn(process.execPath, ['--require', TSX_CJS, MAIN], {
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      env: { ...process.env, RIG_CALIBRATION_API_KEY: opts.apiKey },
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8192)));
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null, sig: string | null) =>
        reject(new Error(`calibration server exited (${sig ?? `code ${code}`}) before it listened${stderr ? `:\n${stderr.trim()}` : ''}`));
      child.once('error', (err) => reject(new Error(`calibration server: could not start (${err.message})`)));
      child.once('exit', onExit);
      child.once('message', (m: unknown) => {
        const msg = m as { type?: string; url?: string };
        if (msg?.type !== 'ready' || !msg.url) return reject(new Error(`calibration server: unexpected first message ${JSON.stringify(m)}`));
        child.off('exit', onExit);
        const p = new CalibrationServerProcess(child, msg.url);
        p.stderr = stderr;
        child.stderr?.on('data', (d: string) => (p.stderr = (p.stderr + d).slice(-8192)));
        child.on('message', (r: unknown) => p.onMessage(r as { id: number; ok: boolean; result?: unknown; error?: string }));
        child.once('exit', (code, sig) => p.onExit(code, sig));
        resolve(p);
      });
      child.send({ type: 'start', options: { customers: opts.customers } });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  configure(behaviour: Behaviour): Promise<void> {
    return this.request({ op: 'configure', behaviour }) as Promise<void>;
  }

  tally(runTag: string): Promise<Tally> {
    return this.request({ op: 'tally', runTag }) as Promise<Tally>;
  }

  /** The run tag's per-request truth (given once; the server then forgets it). */
  async truth(runTag: string): Promise<TruthRow[]> {
    const rows = (await this.request({ op: 'truth', runTag })) as Array<[number, number, number, number]>;
    return rows.map(([request, arrival, written, status]) => ({ request, arrival, written, status }));
  }

  /** Closes the server and waits for its process to end (idempotent). */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await this.request({ op: 'stop' }).catch(() => this.child.kill('SIGTERM'));
    await gone;
  }

  private request(body: DistributiveOmit<ServerRequest, 'id'>): Promise<unknown> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, ...body });
    });
  }

  private onMessage(r: { id: number; ok: boolean; result?: unknown; error?: string }): void {
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (r.ok) p.resolve(r.result);
    else p.reject(new Error(`calibration server: ${r.error}`));
  }

  private onExit(code: number | null, sig: string | null): void {
    this.exited = new Error(`calibration server exited (${sig ?? `code ${code}`})${this.stderr ? `:\n${this.stderr.trim()}` : ''}`);
    for (const p of this.pending.values()) p.reject(this.exited);
    this.pending.clear();
  }
}
