// A database handle for the target libraries: either a URL (a client is opened and closed around the
// work) or a client the caller already holds (reused; not closed here).
import pg from 'pg';
import { pgConfig } from '../pg/connection';

export type Db = string | pg.ClientBase;

export async function withClient<T>(db: Db, fn: (client: pg.ClientBase) => Promise<T>, applicationName = 'rig'): Promise<T> {
  if (typeof db !== 'string') return fn(db);
  const client = new pg.Client(pgConfig(db, { application_name: applicationName }));
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A bigint column read as text, as a JS number; throws when it would lose precision. */
export function exactNumber(text: string | number | null | undefined, what: string): number {
  if (text === null || text === undefined) return 0;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`${what} = ${text} is beyond exact JS integers (2^53)`);
  return n;
}
