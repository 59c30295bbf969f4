// "Nothing answered": Temporal, the service under test or a database could not be reached at all.
// The commands exit 69 for it (client/exit-codes.ts UNREACHABLE), apart from a refusal by something
// that did answer (a bad key, a wrong password: the user's input, exit 2) and from a failure (exit 1).
export class UnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/** Socket errors that mean nobody answered at that address (the error's code, or its cause's). */
const NO_ANSWER = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'TimeoutError']);

export function isNoAnswer(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: unknown; errors?: unknown[] } | undefined;
  if (!e) return false;
  if (e instanceof UnreachableError) return true;
  if (NO_ANSWER.has(e.code ?? '') || NO_ANSWER.has(e.name ?? '')) return true;
  // AggregateError (net's happy eyeballs: one per address) and undici's cause chain.
  if (Array.isArray(e.errors) && e.errors.some(isNoAnswer)) return true;
  return e.cause !== undefined && e.cause !== e && isNoAnswer(e.cause);
}
