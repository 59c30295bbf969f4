// This worker's host name: what its task queues are named by (lib/temporal/queues.ts).
import os from 'node:os';

/** RIG_HOST when set (two workers on one machine, tests), else the OS's host name. */
export function hostName(): string {
  return process.env.RIG_HOST || os.hostname();
}
