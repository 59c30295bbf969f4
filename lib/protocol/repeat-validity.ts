// An instrument failure is the instrument's (issue 34): a sustained repeat that failed while the
// generator was late (the instrument gate) or while the hypervisor took the load host's CPU (steal
// over a bound) is INVALID, not failed. Its evidence and verdict are kept and shown; it is not
// counted in N/M; the configuration runs that repeat again, at most once per configuration. A
// repeat with no valid attempt left reads NOT JUDGED (instrument), never NOT HELD.
//
// Only failures such a hiccup explains make a repeat invalid: a late or starved generator sends in
// bursts, so latency (threshold, drift), free slots (dropped) and per-second delivery suffer with the
// lateness itself (and too few samples when requests were dropped: the drops' shortfall). A failed
// request, rows or quantity that do not reconcile, too few samples with none dropped, a
// DEGRADED probe or a run cut short are the target's (or the spec's), whatever the host did: such a
// repeat stays FAIL.
import type { RepeatSummary } from './campaign-result';
import type { CheckName, GateCheck } from './gates';
import { fmt } from './gates';
import type { StealSpread } from './host-steal';
import type { VerdictState } from './verdicts';

/** Re-runs of an invalid repeat a configuration may take (the protocol's repeats stay its own). */
export const MAX_RERUNS_PER_CONFIGURATION = 1;

/**
 * Host CPU steal (max over the repeat's host samples, one every 5 s, % of the host's CPU time) at or
 * over which a failed repeat is the host's, not the target's. A default of the protocol, passed by
 * the workflow in each repeat's input (so the history records the bound every repeat was judged
 * with). 5 %: the page names steal from 2 % (host-steal.ts STEAL_NOTE_PCT); bursts of 3.5-9 % on a
 * shared 2-core VM were seen to turn a healthy 30-s repeat's last third into drift.
 */
export const INVALID_STEAL_PCT = 5;

/**
 * The steal bound a campaign's repeats are judged with, set by its calibration: the instrument was
 * proven (CALIBRATED) while the host's steal reached `calibrated.max`, so only steal beyond what it was
 * proven under makes a failed repeat the host's. Never below INVALID_STEAL_PCT (steal under it is not
 * the host's excuse), and the constant when the calibration did not watch steal (an older record, no
 * /proc). Whole percent, rounded up, so the bound in the history reads plainly.
 */
export function stealBoundFromCalibration(calibrated: Pick<StealSpread, 'max'> | null | undefined): number {
  if (!calibrated || !Number.isFinite(calibrated.max)) return INVALID_STEAL_PCT;
  return Math.max(INVALID_STEAL_PCT, Math.ceil(calibrated.max));
}

/** Failed checks a late or starved generator explains. */
export const EXPLAINED_BY_INSTRUMENT: readonly CheckName[] = ['instrument', 'threshold', 'drift', 'dropped', 'delivered'];

export interface ValidityInput {
  state: VerdictState;
  passed: boolean;
  checks: readonly Pick<GateCheck, 'name' | 'passed' | 'detail'>[];
  probeState: 'OFF' | 'OK' | 'DEGRADED';
  /** Reasons that are not the gate's (after the load: a sampler, reconcile, the analysis). */
  afterLoad: number;
}

/**
 * Why a judged repeat is invalid ("instrument: ..." or "host CPU steal: ..."), or null when its
 * verdict stands (it passed, or a failure the instrument does not explain is among its reasons).
 */
export function invalidReason(v: ValidityInput, steal: StealSpread | null, stealBoundPct: number = INVALID_STEAL_PCT): string | null {
  if (v.passed || v.state !== 'FAIL' || v.afterLoad > 0 || v.probeState === 'DEGRADED') return null;
  const failed = v.checks.filter((c) => c.passed === false);
  // Too few samples because requests were dropped is the drops' shortfall, explained as they are.
  const dropped = failed.some((c) => c.name === 'dropped');
  const explained = (c: { name: CheckName }) => EXPLAINED_BY_INSTRUMENT.includes(c.name) || (c.name === 'samples' && dropped);
  if (failed.length === 0 || !failed.every(explained)) return null;
  const late = failed.find((c) => c.name === 'instrument');
  if (late) return `instrument: ${late.detail}`;
  if (steal && steal.max >= stealBoundPct) {
    return `host CPU steal: up to ${fmt(steal.max)} % (median ${fmt(steal.median)} %) >= bound ${fmt(stealBoundPct)} %, the hypervisor took the load host's CPU`;
  }
  return null;
}

/** A configuration may run an invalid repeat again while it has taken fewer than MAX_RERUNS_PER_CONFIGURATION re-runs. */
export function mayRerun(repeats: readonly Pick<RepeatSummary, 'configuration' | 'invalid' | 'kind'>[], configuration: string): boolean {
  const invalid = repeats.filter((r) => r.configuration === configuration && r.kind !== 'ceiling' && r.invalid).length;
  // Each invalid repeat before the last one took a re-run (or none was left): the last one may take one when the count allows.
  return invalid >= 1 && invalid <= MAX_RERUNS_PER_CONFIGURATION;
}

/** Repeats that count (N/M, the plan's progress): every judged repeat but the invalid ones. */
export function countedRepeats<T extends Pick<RepeatSummary, 'invalid'>>(repeats: readonly T[]): T[] {
  return repeats.filter((r) => !r.invalid);
}

/** Max and median of the host samples' CPU steal (%), or null with none sampled. */
export function stealSpread(values: readonly number[]): StealSpread | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const mid = v.length >> 1;
  return { max: v[v.length - 1], median: v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2 };
}
