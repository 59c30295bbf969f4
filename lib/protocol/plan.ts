// The campaign's plan in time: how long each step is expected to take, what is left from a given step,
// and whether the watchdog's deadline covers it. Pure (no clock): the workflow adds "now".
//
// The watchdog tears the rig down at its deadline. A deadline shorter than the plan tears a healthy
// series down halfway, so the spec check refuses one shorter than the plan plus a margin, and the
// campaign moves the deadline forward at each step when a step has run over (workflows/campaign.ts).
import { MIN_SAMPLES } from './gates';
import type { CampaignSpec } from './spec';
import { measuringOrder, measuringSeries, warmsUpBefore } from './variants';

/**
 * Minutes allowed for the steps whose length the spec does not state: about what they take on the
 * local target (calibration ~1-2 min, provisioning and teardown seconds), with room for a slow host.
 */
export const STEP_ALLOWANCE_MINUTES = { calibrate: 5, provision: 5, 'bring-up': 2, teardown: 5, report: 1 } as const;
/** Seed rows per second assumed for the plan: a quarter of the ~38,000/s measured on a 2-core host. */
export const SEED_ROWS_PER_SECOND = 10_000;
/** The margin over the plan: the larger of these (a long series overruns in proportion). */
export const WATCHDOG_MARGIN = { minMinutes: 15, share: 0.25 } as const;

/** The steps in the order they run; a plan "from" a step counts it and everything after it. */
export const PLAN_STEPS = ['calibrate', 'provision', 'bring-up', 'seed', 'measuring', 'teardown', 'report'] as const;
export type PlanStep = (typeof PLAN_STEPS)[number];

export interface PlanPart {
  step: PlanStep;
  minutes: number;
}

/** Pgbench legs of the denominator (lib/targets/pgbench-script.ts LEGS: commit rate, one-row, RLS, multi-row). */
export const DENOMINATOR_LEGS = 4;

/** Measuring seconds left after `repeatsDone` repeats (warm-ups, repeats, cool-downs, ceiling, denominator). */
export function measuringSecondsLeft(spec: CampaignSpec, repeatsDone: number): number {
  let left = 0;
  const series = measuringSeries(spec);
  if (series) {
    const ladder = series.kind === 'rung';
    const { seconds, cooldown, warmup } = ladder
      ? { seconds: spec.ladder!.rungSeconds, cooldown: spec.ladder!.cooldownSeconds, warmup: spec.ladder!.warmupSeconds }
      : { seconds: spec.sustained!.repeatSeconds, cooldown: spec.sustained!.cooldownSeconds, warmup: spec.sustained!.warmupSeconds };
    const order = measuringOrder(spec);
    const n = Math.max(0, order.length - repeatsDone);
    // A ladder cools down after every rung, the last one too; sustained repeats between repeats only.
    left += n * seconds + (ladder ? n : Math.max(0, n - 1)) * cooldown;
    // A warm-up and its cool-down before each unit lib/protocol/variants.ts warmsUpBefore says (each
    // configuration not yet begun, a ladder's first rung, every change of variant).
    const warmUps = order.filter((_, i) => i >= repeatsDone && warmsUpBefore(order, i, series.kind)).length;
    if (warmup > 0) left += warmUps * (warmup + cooldown);
  }
  left += spec.ceiling?.seconds ?? 0;
  left += (spec.denominator?.seconds ?? 0) * DENOMINATOR_LEGS;
  return left;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** The plan from `from` on (its parts, in minutes); `repeatsDone` repeats of the measuring are behind. */
export function planFrom(spec: CampaignSpec, from: PlanStep, repeatsDone = 0): PlanPart[] {
  const minutes: Record<PlanStep, number> = {
    calibrate: spec.calibrate ? STEP_ALLOWANCE_MINUTES.calibrate : 0,
    provision: STEP_ALLOWANCE_MINUTES.provision,
    'bring-up': STEP_ALLOWANCE_MINUTES['bring-up'],
    seed: (spec.seed.historyRows / SEED_ROWS_PER_SECOND + spec.seed.settleTimeoutSeconds) / 60,
    measuring: measuringSecondsLeft(spec, repeatsDone) / 60,
    teardown: STEP_ALLOWANCE_MINUTES.teardown,
    report: STEP_ALLOWANCE_MINUTES.report,
  };
  return PLAN_STEPS.slice(PLAN_STEPS.indexOf(from)).map((step) => ({ step, minutes: round1(minutes[step]) }));
}

export function totalMinutes(parts: readonly PlanPart[]): number {
  return round1(parts.reduce((a, p) => a + p.minutes, 0));
}

export function marginMinutes(planMinutes: number): number {
  return Math.ceil(Math.max(WATCHDOG_MARGIN.minMinutes, WATCHDOG_MARGIN.share * planMinutes));
}

/** What the watchdog must cover from the moment it is armed (just before provisioning). */
export function watchdogNeed(spec: CampaignSpec): { parts: PlanPart[]; planMinutes: number; marginMinutes: number; minutes: number } {
  const parts = planFrom(spec, 'provision');
  const planMinutes = totalMinutes(parts);
  const margin = marginMinutes(planMinutes);
  return { parts, planMinutes, marginMinutes: margin, minutes: Math.ceil(planMinutes + margin) };
}

export function describePlan(parts: readonly PlanPart[]): string {
  return parts.map((p) => `${p.step} ${p.minutes}`).join(', ');
}

/** The spec check: null when the watchdog covers the plan and its margin, else the error, naming both. */
export function watchdogProblem(spec: CampaignSpec): string | null {
  // No watchdog runs on an existing deployment (nothing of the rig's to tear down): nothing to cover.
  if (spec.target === 'existing') return null;
  const need = watchdogNeed(spec);
  if (spec.watchdogMinutes >= need.minutes) return null;
  return (
    `watchdogMinutes: ${spec.watchdogMinutes} is shorter than the plan from provisioning on (${need.planMinutes} min: ${describePlan(need.parts)}) ` +
    `plus its margin (${need.marginMinutes} min) = ${need.minutes} min; the watchdog would tear the rig down mid-series. Set watchdogMinutes to at least ${need.minutes}`
  );
}

/** One line for `rig campaign start`: the deadline beside what it covers. */
export function watchdogLine(spec: CampaignSpec): string {
  const need = watchdogNeed(spec);
  return `watchdog ${spec.watchdogMinutes} min; plan ${need.planMinutes} min (${describePlan(need.parts)}) + margin ${need.marginMinutes} min = ${need.minutes} min`;
}

/**
 * Configurations whose repeats cannot pass: fewer requests per repeat than the sustained gate's
 * minimum sample count (lib/protocol/gates.ts MIN_SAMPLES), so every repeat fails "samples" whatever
 * the service does. Said before anything runs (a warning, not a refusal: short smoke runs are fine).
 */
export function sampleWarnings(spec: Pick<CampaignSpec, 'sustained'>): string[] {
  const s = spec.sustained;
  if (!s) return [];
  return s.configurations
    .map((c) => ({ c, n: Math.floor((c.eventsPerSecond / c.batch) * s.repeatSeconds) }))
    .filter(({ n }) => n < MIN_SAMPLES)
    .map(({ c, n }) => {
      const need = Math.ceil((MIN_SAMPLES * c.batch) / c.eventsPerSecond);
      return `WARNING configuration ${c.name}: ${n} requests per repeat (${c.eventsPerSecond} ev/s at batch ${c.batch} for ${s.repeatSeconds} s), fewer than the ${MIN_SAMPLES} the gate requires: every repeat will fail "samples"; set sustained.repeatSeconds >= ${need}`;
    });
}
