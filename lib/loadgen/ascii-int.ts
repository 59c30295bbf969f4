// Integers written as ASCII digits straight into a byte buffer: the sample writer's rows and the
// request bodies and heads are formatted this way on the hot path, with no string per number.

/** Writes a non-negative integer (< 2^53) as ASCII digits at p; returns the position after it. */
export function writeInt(b: Buffer, p: number, v: number): number {
  if (v < 10) {
    b[p] = 48 + v;
    return p + 1;
  }
  let digits = 0;
  for (let x = v; x >= 1; x = Math.floor(x / 10)) digits++;
  let q = p + digits;
  for (let x = v; q > p; x = Math.floor(x / 10)) b[--q] = 48 + (x % 10);
  return p + digits;
}

/** How many digits writeInt writes for v. */
export function intLength(v: number): number {
  let digits = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  return digits;
}
