// A parent process for the parent-death test: starts a long load run and prints the generator
// child's pid, then waits to be killed. Usage: tsx parent-of-load.ts URL API_KEY OUT
import { runLoad } from '../../../lib/loadgen/run-load';

const [url, apiKey, out, runTag] = process.argv.slice(2);
runLoad(
  { url, apiKey, rate: 200, batch: 1, seconds: 60, out, runTag, customers: ['cus_1'], warmupSeconds: 0 },
  (p) => {
    if (p.second === 1) process.stdout.write(`${JSON.stringify({ progress: p.second })}\n`);
  },
  { onSpawn: (pid) => process.stdout.write(`${JSON.stringify({ child: pid })}\n`) },
).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
