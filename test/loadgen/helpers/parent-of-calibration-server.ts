// A parent process for the calibration server's parent-death test: starts the server in its own
// process, prints its pid and URL, then waits to be killed. Usage: tsx parent-of-calibration-server.ts
import { CalibrationServerProcess } from '../../../lib/loadgen/calibration-server-process';

CalibrationServerProcess.start({ apiKey: 'k', customers: ['cus_1'] }).then(
  (s) => {
    process.stdout.write(`${JSON.stringify({ server: s.pid, url: s.url })}\n`);
    setInterval(() => undefined, 1 << 30); // stay until killed
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
