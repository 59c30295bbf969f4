// What a campaign's end says of each configuration, in one place for every reader: the closing
// lines (client/progress-view.ts), --summary-export and `rig campaign watch -o json`. Counted from
// the repeats that ran, not only those that passed, so a configuration the campaign stopped before
// reads "not run", never 0/3 (a verdict on a service that was never loaded), and one stopped halfway
// is "not judged" (too few repeats to hold or not).
import type { CampaignResult, ConfigurationOutcome } from './campaign-result';

/** The page's and the closing lines' words. */
export type ConfigurationState = 'not run' | 'not judged' | 'held' | 'not held';

export interface ConfigurationEnd extends ConfigurationOutcome {
  /** Repeats that ran to a verdict (interrupted attempts and the ceiling aside). */
  ran: number;
  state: ConfigurationState;
}

export function configurationState(ran: number, total: number, held: boolean): ConfigurationState {
  if (ran === 0) return 'not run';
  if (ran < total) return 'not judged';
  return held ? 'held' : 'not held';
}

/** Each configuration of `result` with the repeats that ran and its state. */
export function configurationEnds(result: Pick<CampaignResult, 'configurations' | 'repeats'>): ConfigurationEnd[] {
  return result.configurations.map((c) => {
    const ran = result.repeats.filter((x) => x.configuration === c.name && x.kind !== 'ceiling').length;
    return { ...c, ran, state: configurationState(ran, c.total, c.held) };
  });
}
