// What a campaign answers while it runs: the progress query, and the abort signal and update (finish
// the current repeat, then teardown and the report). Set before the campaign's first await, so a query
// or an abort right after the start is answered.
import { log, setHandler } from '@temporalio/workflow';
import { abortSignal, abortUpdate, progressQuery } from '../messages';
import { SERIES_STEPS, type Campaign } from './context';

export function answerMessages(cx: Campaign): void {
  const progress = cx.progress;
  // Nothing computed from the clock here: a query sees the workflow's time of its last task, which
  // stands still during a repeat; the client computes the elapsed time from startedAt.
  setHandler(progressQuery, () => progress);
  const requestAbort = (reason?: string) => {
    cx.aborting = true;
    progress.aborting = true;
    log.info('abort requested: finishing the current repeat, then tearing down', { reason });
  };
  setHandler(abortSignal, requestAbort);
  setHandler(
    abortUpdate,
    (reason: string) => {
      requestAbort(reason);
      if (progress.phase === 'repeat' && progress.repeat && cx.repeatEndsAtMs !== undefined) {
        return `the current repeat (${progress.configuration} ${progress.repeat.k}/${progress.repeat.n}) finishes at ${new Date(cx.repeatEndsAtMs).toISOString()}, then teardown and the report`;
      }
      if (progress.phase === 'cool-down') return 'the cool-down ends now; then teardown and the report';
      if (progress.step === 'lease') return 'the campaign stops waiting for the lease: nothing was provisioned or measured; the report follows';
      if (SERIES_STEPS.includes(progress.step)) return `the current step (${progress.step}) finishes, then teardown and the report`;
      return `no repeat will start: the steps before the series (now ${progress.step}) finish, then teardown and the report`;
    },
    {
      validator: (_reason: string) => {
        if (cx.aborting) throw new Error('already aborting: the current repeat finishes, then teardown');
        if (['teardown', 'clean-check-after', 'report', 'done'].includes(progress.step)) throw new Error(`nothing to abort: the campaign is past measuring (step ${progress.step})`);
      },
    },
  );
}
