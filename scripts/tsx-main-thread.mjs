// `node --import ./scripts/tsx-main-thread.mjs`: how scripts/run-tests.cjs loads TypeScript into a test
// file's process. It is `--import tsx`, in the main thread of the process that runs the tests only:
// - not in its worker threads. They inherit the process's --import, and every Temporal Worker that runs
//   workflows starts one (the SDK's workflow thread: plain JavaScript, and the workflow bundle run in a
//   vm). Under tsx that thread loaded tsx and its ESM hooks again and lexed and source-mapped every
//   .js file it required: about 0.45 s of CPU more per Worker, and the test doubles start three Workers
//   a test. No worker thread the tests start loads TypeScript (reference/precise-wait.ts's is eval'd).
// - not in node's `--test` orchestrator, which only spawns the file's own process (with this --import).
// In the main thread it stays tsx's ESM entry, not `--require tsx/cjs`: the test file then loads on
// Node's asynchronous ESM path, by when tsx's WebAssembly lexer is ready; a synchronous require from
// the first line parses every .js file with tsx's JavaScript fallback lexer, about 0.5 s of CPU more for
// a campaign test's ~1,200 modules.
import { isMainThread } from 'node:worker_threads';

if (isMainThread && !process.execArgv.includes('--test')) await import('tsx');
