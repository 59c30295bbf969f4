// Signals and queries of the rig's workflows, shared by the workflows and the client.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CampaignStatus, RepeatSummary, StepName } from '../lib/protocol/campaign-result';

export interface CampaignProgress {
  campaignId: string;
  /** The host whose worker claimed the campaign: its machine-bound steps run there (rig-host-<host>). */
  host?: string;
  step: StepName | 'start' | 'done';
  status: 'running' | CampaignStatus;
  configuration?: string;
  /** Repeat k of N of the current configuration. */
  repeat?: { k: number; n: number };
  /** Within a series: warming the target (not measured), measuring, or waiting out the cool-down timer. */
  phase?: 'warm-up' | 'repeat' | 'cool-down' | 'variant';
  /** What the campaign waits for before it can go on (another campaign's measuring lease). */
  waitingFor?: string;
  /** When the campaign started; the client computes the elapsed time (a query has no clock of its own). */
  startedAt: string;
  /** Estimate of the measuring time still ahead (repeats, cool-downs, ceiling, denominator). */
  secondsLeft: number;
  lastVerdicts: Array<Pick<RepeatSummary, 'configuration' | 'index' | 'attempt' | 'passed' | 'p99Ms' | 'reasons' | 'invalid' | 'notJudged'>>;
  aborting: boolean;
}

export const progressQuery = defineQuery<CampaignProgress>('progress');
/** Finish (stop) the current repeat, then tear down and report. */
export const abortSignal = defineSignal<[reason?: string]>('abort');
/**
 * The same as an Update: refused (by its validator) when there is nothing to abort, else it returns
 * what will happen ("the current repeat (single 2/3) finishes at <time>, then teardown").
 */
export const abortUpdate = defineUpdate<string, [reason: string]>('abort');

/** Watchdog: stand down (the campaign tore down cleanly). */
export const disarmSignal = defineSignal('disarm');
/** Watchdog: move the deadline later by this many minutes. */
export const extendSignal = defineSignal<[minutes: number]>('extend');
/** The same as an Update: refused for a bad number or a watchdog that is not armed; returns the new deadline. */
export const extendUpdate = defineUpdate<WatchdogState, [minutes: number]>('extend');
/**
 * Watchdog: tear down now, not at the deadline (the campaign's own teardown gave up, or an operator
 * wants the rig gone). The reason is recorded in the watchdog's result.
 */
export const fireSignal = defineSignal<[reason: string]>('fire');
/**
 * Watchdog: hold the rig at least until this time (epoch ms); an earlier time changes nothing. The
 * campaign sends it at each step, so the deadline follows the plan (lib/protocol/plan.ts).
 */
export const holdUntilSignal = defineSignal<[epochMs: number]>('hold-until');
export interface WatchdogState {
  deadline: string;
  state: 'armed' | 'disarmed' | 'fired';
  /** Why it fired: 'deadline', or the reason a fire signal gave. */
  firedBy?: string;
  /** How many continue-as-new runs came before the one answering (absent: none; workflows/watchdog.ts). */
  run?: number;
  /** While its teardown retries without a cap: why the host's queue did not tear the rig down, and where it retries. */
  teardownFailing?: string;
}
export const watchdogQuery = defineQuery<WatchdogState>('watchdog');

/** A host's measuring lease (workflows/host-lease.ts): who holds it since when, and who waits, in order. */
export interface LeaseState {
  host: string;
  holder?: { workflowId: string; since: string };
  waiting: string[];
}
/** To the lease: the campaign with this workflow id wants to measure on the host. */
export const leaseRequestSignal = defineSignal<[workflowId: string]>('lease-request');
/** To the lease: the campaign gives the lease back (or stops waiting for it). */
export const leaseReleaseSignal = defineSignal<[workflowId: string]>('lease-release');
/** To the campaign: the lease of this host is yours. */
export const leaseGrantedSignal = defineSignal<[host: string]>('lease-granted');
export const leaseQuery = defineQuery<LeaseState>('lease');
