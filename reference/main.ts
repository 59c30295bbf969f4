// `node --import tsx reference/main.ts`: the reference service configured by HC_* environment variables
// (see config.ts). On listen it prints exactly one JSON line to stdout, {"listening": url, "pid": pid},
// which is how the local target learns its port when HC_PORT=0. Nothing it prints carries
// HC_DATABASE_URL (the app role's password is inside it).
import { configFromEnv } from './config';
import { startService, type RunningService } from './service';

async function main(): Promise<void> {
  let config;
  try {
    config = configFromEnv(process.env);
  } catch (err) {
    console.error(`reference service: ${(err as Error).message}`);
    process.exit(2);
  }
  // Signal handlers go in before the listening line: whoever reads that line may send SIGTERM at once,
  // and a signal that arrives before a listener exists kills the process with the default action.
  const state: { svc?: RunningService; signal?: string } = {};
  const stop = () => {
    if (!state.svc || !state.signal) return; // still starting: stopped as soon as it is up
    const signal = state.signal;
    state.svc.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`reference service: error while stopping on ${signal}: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (state.signal) return;
      state.signal = signal;
      stop();
    });
  }
  const svc = await startService(config);
  state.svc = svc;
  if (state.signal) return stop();
  const c = svc.config;
  console.error(
    `reference service: pool ${c.poolSize}, last_used_at ${c.lastUsed}, insert ${c.insert}, aggregate ${c.aggregate}${c.addedDelayMs ? `, added delay ${c.addedDelayMs} ms per request` : ''}${c.addedWaitUs ? `, added wait ${c.addedWaitUs} µs per request` : ''}${c.addedCpuUs ? `, added CPU ${c.addedCpuUs} µs per request` : ''}${c.extraWalBytes ? `, extra WAL ${c.extraWalBytes} B per event` : ''}${c.build ? `, build ${c.build}` : ''}`,
  );
  process.stdout.write(JSON.stringify({ listening: svc.url, pid: process.pid }) + '\n');
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
