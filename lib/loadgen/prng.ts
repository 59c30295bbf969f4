// A seeded, counter-based generator: the value for (seed, counter) is a pure function of both, so the
// quantity and customer of any event are known without replaying the run, and a dropped request does
// not shift the values of the ones after it. The sum of quantity sent is therefore exact, and a
// verifier can recompute it from (seed, request index) alone.

/** murmur3's 32-bit finalizer over seed and counter: well mixed, cheap, deterministic. */
export function hash32(seed: number, counter: number): number {
  let x = (seed + Math.imul(counter | 0, 0x9e3779b1)) | 0;
  x ^= (counter / 0x100000000) | 0; // counters past 2^32 still differ
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** An integer in [min, max] for (seed, counter). */
export function intIn(seed: number, counter: number, min: number, max: number): number {
  return min + (hash32(seed, counter) % (max - min + 1));
}

/** A 32-bit seed from any string (FNV-1a), e.g. from the run tag. */
export function seedFromString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
