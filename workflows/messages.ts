// Signals and queries of the rig's workflows, shared by the workflows and the client.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CampaignStatus, RepeatSummary, StepName } from '../lib/protocol/campaign-result';

export interface CampaignProgress {
  campaignId: string;
  step: StepName | 'start' | 'done';
  status: 'running' | CampaignStatus;
  configuration?: string;
  /** Repeat k of N of the current configuration. */
  repeat?: { k: number; n: number };
  /** Within a series: warming the target (not measured), measuring, or waiting out the cool-down timer. */
  phase?: 'warm-up' | 'repeat' | 'cool-down';
  startedAt: string;
  elapsedSeconds: number;
  /** Estimate of the measuring time still ahead (repeats, cool-downs, ceiling, denominator). */
  secondsLeft: number;
  lastVerdicts: Array<Pick<RepeatSummary, 'configuration' | 'index' | 'attempt' | 'passed' | 'p99Ms' | 'reasons'>>;
  aborting: boolean;
}

export const progressQuery = defineQuery<CampaignProgress>('progress');
/** Finish (stop) the current repeat, then tear down and report. */
export const abortSignal = defineSignal<[reason?: string]>('abort');

/** Watchdog: stand down (the campaign tore down cleanly). */
export const disarmSignal = defineSignal('disarm');
/** Watchdog: move the deadline later by this many minutes. */
export const extendSignal = defineSignal<[minutes: number]>('extend');
export interface WatchdogState {
  deadline: string;
  state: 'armed' | 'disarmed' | 'fired';
}
export const watchdogQuery = defineQuery<WatchdogState>('watchdog');
