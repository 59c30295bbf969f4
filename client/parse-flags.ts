// Flag values of the instrument's commands (measure, analyze), parsed with errors that name the flag
// and say what to give instead.
import type { Reconciliation } from '../lib/protocol/gates';

export class UsageError extends Error {}

/** A number from a flag; undefined when the flag is absent. */
export function numberFlag(value: string | undefined, flag: string, example: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number, got '${value}': e.g. ${flag} ${example}`);
  return n;
}

/** A whole number >= min (a count of seconds, of rows): a fraction is refused, never rounded. */
export function wholeNumberFlag(value: string | undefined, flag: string, example: string, min = 1): number | undefined {
  const n = numberFlag(value, flag, example);
  if (n === undefined) return undefined;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number >= ${min}, got '${value}': e.g. ${flag} ${example}`);
  return n;
}

/** `rows=N,quantity=Q`: what the database gained for the run tag, counted by whoever owns it. */
export function reconcileFlag(value: string | undefined): Reconciliation | null {
  if (value === undefined) return null;
  const m = /^\s*rows\s*=\s*(\d+)\s*,\s*quantity\s*=\s*(\d+)\s*$/.exec(value);
  if (!m) throw new UsageError(`--reconcile must be 'rows=N,quantity=Q' (the rows and the sum of quantity the database holds for the run tag), got '${value}'`);
  return { rows_written: Number(m[1]), quantity_gained: Number(m[2]) };
}
