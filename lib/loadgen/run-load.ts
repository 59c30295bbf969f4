// The parent side of the load generator: what `rig measure`, calibration and the Temporal activities
// call. It checks the options, runs the pre-flight (unless told not to), spawns the child
// (node --require tsx/cjs lib/loadgen/child.ts) with an IPC channel, relays its progress lines, and
// returns its summary with the path of the sample stream.
//
// Cancelling (the AbortSignal) sends SIGTERM: the child stops offering load, flushes a valid stream
// and reports itself cut short; the promise then resolves with interrupted = true. If this process
// dies instead, the child sees its IPC channel close and stops by itself.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { LoadSummary, ProgressLine } from './generator';
import { LoadOptionsError, checkCustomers, resolveLoadOptions, type LoadOptions, type ResolvedLoadOptions } from './options';
import { preflight } from './preflight';

export type { LoadSummary, ProgressLine } from './generator';

export interface LoadResult {
  summary: LoadSummary;
  /** The gzip CSV sample stream. */
  stream: string;
  interrupted: boolean;
  options: ResolvedLoadOptions;
}

export interface RunLoadControl {
  signal?: AbortSignal;
  /** Default true. Calibration, which owns its server, may skip it. */
  preflight?: boolean;
  /** Told the child's pid once it is spawned (diagnostics, tests of the parent-death watch). */
  onSpawn?: (pid: number) => void;
  /**
   * Awaited when the child's connections are warm, right before its first request: the child waits
   * for it (at most EDGE_WAIT_MS; a failure is the caller's to record, the load goes on).
   */
  beforeFirstRequest?: () => Promise<void>;
  /** Called as soon as the child has every reply in; awaited (at most EDGE_WAIT_MS) before runLoad resolves. */
  afterLastReply?: () => Promise<void>;
}

/** The longest a load waits on a reading at its edges (a database that does not answer must not hold it). */
export const EDGE_WAIT_MS = 10_000;

function bounded(fn: (() => Promise<void>) | undefined): Promise<void> {
  if (!fn) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve()
      .then(fn)
      .catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, EDGE_WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
}

const CHILD = path.join(__dirname, 'child.ts');
const TSX_CJS = require.resolve('tsx/cjs');

export async function runLoad(options: LoadOptions, onProgress?: (p: ProgressLine) => void, ctl: RunLoadControl = {}): Promise<LoadResult> {
  const resolved = resolveLoadOptions(options);
  const apiKey = options.apiKey ?? process.env.RIG_API_KEY ?? '';
  if (ctl.preflight !== false) {
    const pf = await preflight(resolved.url, apiKey);
    if (resolved.customers.length === 0) {
      if (pf.customers.length === 0) {
        throw new LoadOptionsError('customers', 'customers (--customers): none given and the target listed none: give --customers FILE (one external id per line)');
      }
      resolved.customers = pf.customers;
    }
  }
  checkCustomers(resolved.customers);
  if (ctl.signal?.aborted) throw new Error('runLoad: cancelled before the load started');
  return spawnChild(resolved, apiKey, options.tenantKeys ?? [], onProgress, ctl);
}

function spawnChild(o: ResolvedLoadOptions, apiKey: string, tenantKeys: readonly string[], onProgress: ((p: ProgressLine) => void) | undefined, ctl: RunLoadControl): Promise<LoadResult> {
  const signal = ctl.signal;
  return new Promise((resolve, reject) => {
    // RIG_LOADGEN_NODE_ARGS: extra node flags for the child only (e.g. --cpu-prof when profiling it).
    const extra = (process.env.RIG_LOADGEN_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const child = spawn(process.execPath, ['--expose-gc', ...extra, '--require', TSX_CJS, CHILD], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // The other tenants' keys (issue 35) by env too, one a line; absent with one tenant.
      env: { ...process.env, RIG_LOADGEN_API_KEY: apiKey, ...(tenantKeys.length ? { RIG_LOADGEN_TENANT_KEYS: tenantKeys.join('\n') } : {}) },
    });
    if (child.pid !== undefined) ctl.onSpawn?.(child.pid);
    let summary: LoadSummary | null = null;
    let stderr = '';
    const onAbort = () => child.kill('SIGTERM');
    signal?.addEventListener('abort', onAbort, { once: true });
    const out = child.stdout as Readable;
    const err = child.stderr as Readable;
    err.setEncoding('utf8');
    err.on('data', (d: string) => {
      stderr = (stderr + d).slice(-8192);
    });
    readline.createInterface({ input: out }).on('line', (line) => {
      let msg: ProgressLine | LoadSummary;
      try {
        msg = JSON.parse(line) as ProgressLine | LoadSummary;
      } catch {
        stderr = (stderr + line + '\n').slice(-8192);
        return;
      }
      if (msg.type === 'summary') summary = msg;
      else if (msg.type === 'progress') onProgress?.(msg);
    });
    // The load's edges (child.ts): the reading before the first request is awaited before 'go'; the one
    // after the last reply before the result.
    let afterLast: Promise<void> | undefined;
    child.on('message', (m: unknown) => {
      const type = (m as { type?: string })?.type;
      if (type === 'ready') {
        void bounded(ctl.beforeFirstRequest).then(() => {
          // With a callback a closed channel is its error, not the child's 'error' event.
          if (child.connected) child.send({ type: 'go' }, () => undefined);
        });
      } else if (type === 'drained') afterLast ??= bounded(ctl.afterLastReply);
    });
    child.on('error', (err) => reject(new Error(`load generator: could not start (${err.message})`)));
    // 'close' (not 'exit'): every stdout line, the summary included, has been read by then.
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      const done = summary;
      if (done) void (afterLast ?? Promise.resolve()).then(() => resolve({ summary: done, stream: o.out, interrupted: done.interrupted, options: o }));
      else reject(new Error(`load generator exited (${sig ?? `code ${code}`}) without a summary${stderr ? `:\n${stderr.trim()}` : ''}`));
    });
    child.send({ type: 'start', options: o });
  });
}
