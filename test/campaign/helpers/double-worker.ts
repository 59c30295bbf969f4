// A worker with the test doubles for one host name, in a process of its own (the SDK allows one
// worker per task queue in a process): polls `rig`, rig-host-<host> and rig-data-<host> on the given
// server, prints "ready" once polling, and appends each call it runs to a JSON-lines file.
// Usage: node --import tsx double-worker.ts ADDRESS HOST CALLS_FILE
import fs from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { activityDoubles, doubleWorker } from '../doubles';

async function main(): Promise<void> {
  const [address, host, callsFile] = process.argv.slice(2);
  const connection = await NativeConnection.connect({ address });
  const doubles = activityDoubles({ host, dataQueue: `rig-data-${host}`, onCall: (c) => fs.appendFileSync(callsFile, JSON.stringify(c) + '\n') });
  const workers = await Promise.all(
    ['rig', `rig-host-${host}`, `rig-data-${host}`].map((taskQueue) =>
      doubleWorker(connection, taskQueue, doubles.activities),
    ),
  );
  console.log('ready');
  // Runs until its parent kills it.
  await Promise.all(workers.map((w) => w.run()));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
