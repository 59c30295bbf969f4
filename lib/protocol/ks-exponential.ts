// Are these gaps exponential? A one-sample Kolmogorov-Smirnov test against Exp(rate), the rate known
// in advance (the plan's), so the plain KS distribution applies (no Lilliefors correction, which is
// for a rate estimated from the same sample). Calibration uses it on the gaps between the arrivals
// the calibration server saw in a Poisson case (calibration-cases.ts): arrivals that really are a
// Poisson process pass, a constant schedule (every gap 1 / rate) fails at D ~ 0.63.
//
// Resolution. The server sees arrivals with the generator's send granularity on them (a tick a
// millisecond: generator.ts), so each gap is off by up to about a tick either way. The test takes a
// `toleranceUs` δ and measures the distance to the nearest CDF within δ of Exp(rate) sideways:
//   D_δ = max_i max( i/n - F(x_(i) + δ), F(x_(i) - δ) - (i-1)/n ),  F(x) = 1 - e^(-rate x), F(<0) = 0
// which is 0 for any sample whose every point is within δ of an exact exponential sample, and which
// with δ = 0 is the textbook D. δ widens the band, so it makes the test weaker, never falsely strict:
// the figures report both D and D_δ.
//
// p-value: Kolmogorov's limiting distribution at (√n + 0.12 + 0.11/√n) D (Stephens 1970; Numerical
// Recipes' probks), good to a few percent from n ~ 5 up.

export interface KsResult {
  n: number;
  /** The textbook distance (δ = 0). */
  d: number;
  /** The distance with the resolution band (what is judged). */
  d_tolerant: number;
  tolerance_us: number;
  /** P(a true exponential sample of n lies this far or farther), from d_tolerant. */
  p_value: number;
  alpha: number;
  /** p_value >= alpha: the gaps are consistent with Exp(rate). */
  passed: boolean;
}

/** Significance of the calibration's test: a true Poisson schedule is refused 1 time in 1,000. */
export const KS_ALPHA = 0.001;

/** Q_KS(λ) = 2 Σ_{k>=1} (-1)^{k-1} e^{-2 k² λ²}: P(√n D > λ) in the limit. */
export function kolmogorovQ(lambda: number): number {
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += (k % 2 === 1 ? 1 : -1) * term;
    if (term < 1e-12) break;
  }
  return Math.max(0, Math.min(1, 2 * sum));
}

/** The KS test of gaps (µs) against Exp(ratePerS), with a resolution band of toleranceUs. */
export function ksExponential(gapsUs: ArrayLike<number>, ratePerS: number, toleranceUs = 0, alpha = KS_ALPHA): KsResult {
  if (!(ratePerS > 0)) throw new RangeError(`ratePerS must be > 0, got ${ratePerS}`);
  if (!(toleranceUs >= 0)) throw new RangeError(`toleranceUs must be >= 0, got ${toleranceUs}`);
  const x = Float64Array.from(gapsUs).sort();
  const n = x.length;
  if (n === 0) return { n, d: 1, d_tolerant: 1, tolerance_us: toleranceUs, p_value: 0, alpha, passed: false };
  const lambdaUs = ratePerS / 1e6;
  const F = (v: number) => (v <= 0 ? 0 : 1 - Math.exp(-lambdaUs * v));
  let d = 0;
  let dt = 0;
  for (let i = 0; i < n; i++) {
    const hi = (i + 1) / n;
    const lo = i / n;
    d = Math.max(d, hi - F(x[i]), F(x[i]) - lo);
    dt = Math.max(dt, hi - F(x[i] + toleranceUs), F(x[i] - toleranceUs) - lo);
  }
  const sq = Math.sqrt(n);
  const p = kolmogorovQ((sq + 0.12 + 0.11 / sq) * dt);
  return { n, d, d_tolerant: dt, tolerance_us: toleranceUs, p_value: p, alpha, passed: p >= alpha };
}
