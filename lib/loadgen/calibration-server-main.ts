// Entry point of the calibration server's own process (spawned by calibration-server-process.ts).
// The server's clock is the truth calibration judges the instrument by, so it runs apart from the
// generator (its own child) and from the parent (CLI or worker), whose work would otherwise delay
// the server's timers and blur the truth with the instrument's own costs.
//
// In:  {type:'start', options} as the first IPC message (the API key travels in env
//      RIG_CALIBRATION_API_KEY, never in argv); then requests {id, op, ...}.
// Out: {type:'ready', url}; then one {id, ok, result | error} per request.
// It watches its parent like the generator's child does: the IPC channel closing or the parent pid
// changing means the parent is gone, and the server closes and the process exits, so no orphan
// listens on a port.
import { CalibrationServer, type Behaviour } from './calibration-server';

export type ServerRequest =
  | { id: number; op: 'configure'; behaviour: Behaviour }
  | { id: number; op: 'tally'; runTag: string }
  | { id: number; op: 'truth'; runTag: string }
  | { id: number; op: 'stop' };

let server: CalibrationServer | null = null;
let exiting = false;

function exit(code: number): void {
  if (exiting) return;
  exiting = true;
  const s = server;
  server = null;
  if (!s) process.exit(code);
  else void s.stop().finally(() => process.exit(code));
}

function reply(msg: unknown): void {
  try {
    process.send?.(msg);
  } catch {
    exit(0); // the parent is gone
  }
}

const parentPid = process.ppid;
const watch = setInterval(() => {
  if (process.ppid !== parentPid) exit(0);
}, 200);
watch.unref();
process.on('disconnect', () => exit(0));
process.on('SIGINT', () => exit(0));
process.on('SIGTERM', () => exit(0));

function handle(m: ServerRequest): void {
  const s = server;
  if (!s) return;
  try {
    if (m.op === 'configure') {
      s.configure(m.behaviour);
      reply({ id: m.id, ok: true, result: null });
    } else if (m.op === 'tally') reply({ id: m.id, ok: true, result: s.tally(m.runTag) });
    else if (m.op === 'truth') {
      // Compact rows [request, arrival, written, status]: a case has a few thousand requests.
      reply({ id: m.id, ok: true, result: s.takeTruth(m.runTag).map((r) => [r.request, r.arrival, r.written, r.status]) });
    } else if (m.op === 'stop') {
      reply({ id: m.id, ok: true, result: null });
      exit(0);
    } else reply({ id: (m as { id: number }).id, ok: false, error: `unknown op ${(m as { op: string }).op}` });
  } catch (err) {
    reply({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
}

process.once('message', (first: unknown) => {
  const msg = first as { type?: string; options?: { customers: string[]; host?: string } };
  if (msg?.type !== 'start' || !msg.options) {
    process.stderr.write(`calibration server: expected {type:'start', options} as the first message\n`);
    process.exit(1);
  }
  const apiKey = process.env.RIG_CALIBRATION_API_KEY ?? '';
  const s = new CalibrationServer({ apiKey, customers: msg.options.customers, host: msg.options.host });
  server = s;
  s.start().then(
    (url) => {
      process.on('message', (m: unknown) => handle(m as ServerRequest));
      reply({ type: 'ready', url });
    },
    (err: unknown) => {
      process.stderr.write(`calibration server: could not listen (${err instanceof Error ? err.message : String(err)})\n`);
      process.exit(1);
    },
  );
});

if (!process.send) {
  process.stderr.write('calibration server: must be started by startCalibrationServer() (lib/loadgen/calibration-server-process.ts), with an IPC channel\n');
  process.exit(1);
}
