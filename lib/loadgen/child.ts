// Entry point of the load generator's child process (spawned by run-load.ts). Its own event loop
// serves only the schedule and the replies.
//
// In:  the resolved options as the first IPC message {type:'start', options}; the API key in env
//      RIG_LOADGEN_API_KEY (never in argv, where `ps` would show it), the other tenants' in RIG_LOADGEN_TENANT_KEYS.
// Out: one JSON line a second on stdout ({type:'progress',...}) and a last one ({type:'summary',...}).
// The load's edges, over IPC: {type:'ready'} once its connections are warm, after which it waits for
// {type:'go'} before the first request (the parent reads what brackets the load, e.g. the WAL position),
// and {type:'drained'} once every reply is in.
// It watches its parent: the IPC channel closing, or the parent pid changing, means the parent is
// gone, and the child stops offering load at once (then flushes its stream and exits), so no orphan
// keeps loading a server. SIGINT/SIGTERM: same, and the summary says the run was cut short.
// Exit codes: 0 completed, 3 cut short, 1 error.
import { Generator, type LoadSummary, type ProgressLine } from './generator';
import type { ResolvedLoadOptions } from './options';
import { warmUp } from './warmup';

function emit(line: ProgressLine | LoadSummary): void {
  try {
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } catch {
    // the parent is gone; the stream on disk is what matters
  }
}

process.stdout.on('error', () => undefined);

let gen: Generator | null = null;
let started = false;
let stopReason: string | null = null;

/** Resolves the wait for the parent's 'go' (also on a stop: a dead parent sends none). */
let release: (() => void) | null = null;

function stop(reason: string): void {
  stopReason ??= reason;
  release?.();
  if (gen) gen.stop(reason);
  else if (!started) process.exit(3); // no options yet: nothing to flush
  // else: warming up; the generator is stopped as soon as it exists (see start)
}

const parentPid = process.ppid;
const watch = setInterval(() => {
  if (process.ppid !== parentPid) stop('parent process gone');
}, 200);
watch.unref();
process.on('disconnect', () => stop('parent process gone'));
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

async function start(options: ResolvedLoadOptions): Promise<void> {
  const key = process.env.RIG_LOADGEN_API_KEY ?? process.env.RIG_API_KEY ?? '';
  started = true;
  await warmUp(options, options.warmupSeconds);
  const others = (process.env.RIG_LOADGEN_TENANT_KEYS ?? '').split('\n').filter(Boolean);
  gen = new Generator(options, others.length ? [key, ...others] : key, emit, { beforeFirstRequest: askParentToStart, afterLastReply: () => tell({ type: 'drained' }) });
  if (stopReason) gen.stop(stopReason);
  lateForTests(options.runTag);
  const summary = await gen.run();
  emit(summary);
  process.exit(summary.interrupted ? 3 : 0);
}

function tell(msg: { type: string }): void {
  // A closed channel (the parent died) must not become an 'error' on this process before the stream
  // is flushed: with a callback the failure is the callback's.
  if (!process.connected || !process.send) return;
  try {
    process.send(msg, undefined, {}, () => undefined);
  } catch {
    // the parent is gone; the stream on disk is what matters
  }
}

/** 'ready' to the parent, then wait for its 'go' (or a stop). The channel holds the process alive meanwhile. */
function askParentToStart(): Promise<void> {
  if (stopReason) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      release = null;
      process.off('message', onMessage);
      process.channel?.unref();
      resolve();
    };
    const onMessage = (m: unknown) => {
      if ((m as { type?: string })?.type === 'go') done();
    };
    release = done;
    process.channel?.ref();
    process.on('message', onMessage);
    tell({ type: 'ready' });
  });
}

/**
 * TEST-ONLY: RIG_TEST_LATE_GENERATOR="blockMs:everyMs" blocks this event loop blockMs every everyMs
 * (a generator that is really late), so a test can check that calibration refuses it, or that a
 * campaign's repeat is invalid. RIG_TEST_LATE_GENERATOR_TAG=<regex> limits it to runs whose run tag
 * matches (a campaign's measured repeats, say, and not its warm-ups), RIG_TEST_LATE_GENERATOR_HOST=<regex>
 * to generators whose host (RIG_HOST) matches: a local load node's worker has `<host>.n<i>` (the local
 * target's load-workers.ts), so `\.n1$` makes node 1's instrument late and no other's. Honoured only
 * when RIG_TESTING=1 (set by `npm test`); otherwise ignored.
 */
function lateForTests(runTag: string | undefined): void {
  const m = /^(\d+):(\d+)$/.exec(process.env.RIG_TEST_LATE_GENERATOR ?? '');
  if (!m || process.env.RIG_TESTING !== '1') return;
  const only = process.env.RIG_TEST_LATE_GENERATOR_TAG;
  if (only && !new RegExp(only).test(runTag ?? '')) return;
  const host = process.env.RIG_TEST_LATE_GENERATOR_HOST;
  if (host && !new RegExp(host).test(process.env.RIG_HOST ?? '')) return;
  const [blockMs, everyMs] = [Number(m[1]), Number(m[2])];
  setInterval(() => {
    const until = performance.now() + blockMs;
    while (performance.now() < until); // the block itself
  }, everyMs).unref();
}

process.once('message', (m: unknown) => {
  const msg = m as { type?: string; options?: ResolvedLoadOptions };
  if (msg?.type !== 'start' || !msg.options) {
    process.stderr.write(`loadgen child: expected {type:'start', options} as the first message\n`);
    process.exit(1);
  }
  // The channel stays open (its 'disconnect' is how the parent's death is seen) but must not keep
  // this process alive on its own.
  process.channel?.unref();
  start(msg.options).catch((err: unknown) => {
    process.stderr.write(`loadgen child: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
});

if (!process.send) {
  process.stderr.write('loadgen child: must be started by runLoad() (lib/loadgen/run-load.ts), with an IPC channel\n');
  process.exit(1);
}
