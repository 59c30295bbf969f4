// What a campaign's end says of each configuration, in one place for every reader: the closing
// lines (client/progress-view.ts), --summary-export and `rig campaign watch -o json`. Counted from
// the repeats that ran, not only those that passed, so a configuration the campaign stopped before
// reads "not run", never 0/3 (a verdict on a service that was never loaded), and one stopped halfway
// is "not judged" (too few repeats to hold or not). An invalid repeat (the instrument's failure,
// lib/protocol/repeat-validity.ts) is never counted: a repeat left without a valid attempt makes the
// configuration "not judged (instrument)", unless a valid repeat failed (then it is "not held").
// A valid repeat NOT JUDGED on drift (every check that ran passed; the drift interval straddles the
// limit: lib/protocol/drift.ts) is not a failure either: with no failure beside it, the
// configuration is "not judged (drift)" (issue 34: before, it read "not held" while its own reason
// said "not the service's fault").
import type { CampaignResult, CampaignStatus, ConfigurationOutcome, RepeatSummary } from './campaign-result';

/** The page's and the closing lines' words. */
export type ConfigurationState = 'not run' | 'not judged' | 'not judged (instrument)' | 'not judged (drift)' | 'held' | 'not held';

export interface ConfigurationEnd extends ConfigurationOutcome {
  /** Repeats that ran to a verdict (interrupted attempts, invalid ones and the ceiling aside). */
  ran: number;
  state: ConfigurationState;
}

/**
 * `of`: what configurationCounts adds (absent in results from before invalid repeats). A repeat the
 * instrument left unjudged beside a valid failure reads "not held": the target's failure outranks it.
 */
export function configurationState(ran: number, total: number, held: boolean, of: Pick<ConfigurationOutcome, 'passed' | 'invalid' | 'notJudged'> = { passed: ran }): ConfigurationState {
  if (of.notJudged === 'instrument') return 'not judged (instrument)';
  if (of.notJudged === 'drift') return 'not judged (drift)';
  if (ran === 0) return 'not run';
  if (ran < total) return of.invalid && of.passed < ran ? 'not held' : 'not judged';
  return held ? 'held' : 'not held';
}

/** One configuration's counted repeats, from every summary the campaign recorded. */
export function configurationCounts(repeats: readonly RepeatSummary[], name: string, total: number): Pick<ConfigurationOutcome, 'passed' | 'held' | 'invalid' | 'notJudged'> & { ran: number } {
  const mine = repeats.filter((r) => r.configuration === name && r.kind !== 'ceiling');
  const valid = mine.filter((r) => !r.invalid);
  const passed = valid.filter((r) => r.passed).length;
  const invalid = mine.length - valid.length;
  // A repeat index whose every judged attempt is invalid has no verdict: the instrument's (unless a
  // valid repeat failed: the target's failure outranks it, and the configuration is not held).
  const unjudged = new Set(mine.filter((r) => r.invalid).map((r) => r.index));
  for (const r of valid) unjudged.delete(r.index);
  // A valid repeat with no verdict (NOT JUDGED, e.g. on drift) is neither a pass nor a failure.
  const noVerdict = valid.filter((r) => !r.passed && r.notJudged?.length).length;
  const failed = valid.length - passed - noVerdict;
  const notJudged = failed > 0 ? null : unjudged.size ? ('instrument' as const) : noVerdict ? ('drift' as const) : null;
  return {
    ran: valid.length,
    passed,
    held: unjudged.size === 0 && valid.length === total && passed === total,
    ...(invalid ? { invalid } : {}),
    ...(notJudged ? { notJudged } : {}),
  };
}

/** Each configuration of `result` with the repeats that ran and its state. */
export function configurationEnds(result: Pick<CampaignResult, 'configurations' | 'repeats'>): ConfigurationEnd[] {
  return result.configurations.map((c) => {
    const ran = result.repeats.filter((x) => x.configuration === c.name && x.kind !== 'ceiling' && !x.invalid).length;
    return { ...c, ran, state: configurationState(ran, c.total, c.held, c) };
  });
}

/**
 * A campaign's verdict once it measured to its end (no failure, abort or cancellation). A valid
 * failure is the target's and outranks everything measured: not-held (uncalibrated when it ran
 * without calibration, as before). Otherwise a configuration the instrument could not judge makes
 * the campaign not-judged, calibrated or not: the run's own evidence says the instrument failed,
 * which a calibration before it would not have cured. Then uncalibrated; then a configuration whose
 * drift could not be decided (not-judged); then held.
 */
export function campaignVerdict(configurations: readonly ConfigurationOutcome[], calibrated: boolean): Extract<CampaignStatus, 'held' | 'not-held' | 'not-judged' | 'uncalibrated'> {
  // notJudged is set only where no valid repeat failed: any other configuration not held is the target's.
  const targetFailed = configurations.some((c) => !c.held && !c.notJudged);
  if (!targetFailed && configurations.some((c) => c.notJudged === 'instrument')) return 'not-judged';
  if (!calibrated) return 'uncalibrated';
  // A drift the samples could not decide is a statement about the repeats' size, not about the
  // instrument: an uncalibrated run says its own, wider, thing first.
  if (!targetFailed && configurations.some((c) => c.notJudged === 'drift')) return 'not-judged';
  return configurations.every((c) => c.held) ? 'held' : 'not-held';
}
