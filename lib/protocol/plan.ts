// The campaign's plan in time: how long each step is expected to take, what is left from a given step,
// and whether the watchdog's deadline covers it. Pure (no clock): the workflow adds "now".
//
// The watchdog tears the rig down at its deadline. A deadline shorter than the plan tears a healthy
// series down halfway, so the spec check refuses one shorter than the plan plus a margin, and the
// campaign moves the deadline forward at each step when a step has run over (workflows/phases/watchdog.ts followPlan).
import { REFERENCE_TAIL_INDEX, referenceThirdSamples } from './drift';
import { MIN_SAMPLES } from './gates';
import type { CampaignSpec } from './spec';
import { measuringOrder, measuringSeries, warmsUpBefore } from './variants';

/**
 * Minutes allowed for the steps whose length the spec does not state, per target.
 * - local (and existing): about what they take here (calibration ~1-2 min, provisioning and teardown
 *   seconds), with room for a slow host.
 * - aws: provisioning is its activity's start-to-close timeout (15 min: the creates, the launches and
 *   the RDS parameter group; RDS's creation itself is the `database` step, allowed the spec's
 *   aws.database.availableWaitMinutes); bring-up 10, the default workerWaitSeconds a node's first step
 *   waits for its worker to boot (it boots while RDS is created, so usually not at all); teardown 15,
 *   deleting RDS (5-10 min, RDS User Guide "Deleting a DB instance") and terminating the nodes.
 */
export const STEP_ALLOWANCE_MINUTES = {
  local: { calibrate: 5, provision: 5, 'bring-up': 2, teardown: 5, report: 1 },
  aws: { calibrate: 5, provision: 15, 'bring-up': 10, teardown: 15, report: 1 },
} as const;
/**
 * The database side's calibration (`calibrate-database`, issue 31), run at the end of bring-up on a
 * local rig that calibrates (workflows/phases/bring-up.ts): ~50 s measured on a 2-core host (its lock
 * wait, WAL, vacuum and checkpoint markers and a CET log, on a throw-away database), allowed 3 minutes.
 */
export const DB_CALIBRATION_MINUTES = { allowed: 3, expected: 1 } as const;
/** True when the campaign runs the database calibration (the workflow's own condition). */
export const calibratesDatabase = (spec: Pick<CampaignSpec, 'calibrate' | 'target'>): boolean => spec.calibrate && spec.target === 'local';
/** Seed rows per second assumed for the plan: a quarter of the ~38,000/s measured on a 2-core host. */
export const SEED_ROWS_PER_SECOND = 10_000;
/** The margin over the plan: the larger of these (a long series overruns in proportion). */
export const WATCHDOG_MARGIN = { minMinutes: 15, share: 0.25 } as const;

/**
 * The steps in the order they run on the local target; a plan "from" a step counts it and everything
 * after it. An AWS rig runs AWS_PLAN_STEPS: RDS's creation is waited for in a step of its own, and the
 * instrument is calibrated on the load node, which exists only once provisioned.
 */
export const PLAN_STEPS = ['calibrate', 'provision', 'bring-up', 'seed', 'measuring', 'teardown', 'report'] as const;
export const AWS_PLAN_STEPS = ['provision', 'database', 'calibrate', 'bring-up', 'seed', 'measuring', 'teardown', 'report'] as const;
export type PlanStep = (typeof AWS_PLAN_STEPS)[number];

/**
 * Which plan: today's (the default), or `legacy`, the one every target followed before AWS had its own
 * (local allowances, no database step). A campaign started before that change keeps planning the way
 * it did (workflows/phases/spec.ts AWS_PLAN_PATCH): the watchdog signals it sends are in its history.
 */
export interface PlanOptions {
  legacy?: boolean;
}

const awsPlan = (spec: Pick<CampaignSpec, 'target'>, opts: PlanOptions) => spec.target === 'aws' && !opts.legacy;

/** The steps of this spec's plan in the order they run. */
export function planSteps(spec: Pick<CampaignSpec, 'target'>, opts: PlanOptions = {}): readonly PlanStep[] {
  return awsPlan(spec, opts) ? AWS_PLAN_STEPS : PLAN_STEPS;
}

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
export function planFrom(spec: CampaignSpec, from: PlanStep, repeatsDone = 0, opts: PlanOptions = {}): PlanPart[] {
  const allow = awsPlan(spec, opts) ? STEP_ALLOWANCE_MINUTES.aws : STEP_ALLOWANCE_MINUTES.local;
  const minutes: Record<PlanStep, number> = {
    calibrate: spec.calibrate ? allow.calibrate : 0,
    provision: allow.provision,
    database: spec.aws?.database.availableWaitMinutes ?? 0,
    'bring-up': allow['bring-up'] + (calibratesDatabase(spec) ? DB_CALIBRATION_MINUTES.allowed : 0),
    seed: (spec.seed.historyRows / SEED_ROWS_PER_SECOND + spec.seed.settleTimeoutSeconds) / 60,
    measuring: measuringSecondsLeft(spec, repeatsDone) / 60,
    teardown: allow.teardown,
    report: allow.report,
  };
  const steps = planSteps(spec, opts);
  const at = steps.indexOf(from);
  if (at < 0) throw new Error(`step ${from} is not in the ${spec.target} plan (${steps.join(', ')})`);
  return steps.slice(at).map((step) => ({ step, minutes: round1(minutes[step]) }));
}

export function totalMinutes(parts: readonly PlanPart[]): number {
  return round1(parts.reduce((a, p) => a + p.minutes, 0));
}

export function marginMinutes(planMinutes: number): number {
  return Math.ceil(Math.max(WATCHDOG_MARGIN.minMinutes, WATCHDOG_MARGIN.share * planMinutes));
}

/** What the watchdog must cover from the moment it is armed (just before provisioning). */
export function watchdogNeed(spec: CampaignSpec, opts: PlanOptions = {}): { parts: PlanPart[]; planMinutes: number; marginMinutes: number; minutes: number } {
  const parts = planFrom(spec, 'provision', 0, opts);
  const planMinutes = totalMinutes(parts);
  const margin = marginMinutes(planMinutes);
  return { parts, planMinutes, marginMinutes: margin, minutes: Math.ceil(planMinutes + margin) };
}

export function describePlan(parts: readonly PlanPart[]): string {
  return parts.map((p) => `${p.step} ${p.minutes}`).join(', ');
}

/** The spec check: null when the watchdog covers the plan and its margin, else the error, naming both. */
export function watchdogProblem(spec: CampaignSpec, opts: PlanOptions = {}): string | null {
  // No watchdog runs on an existing deployment (nothing of the rig's to tear down): nothing to cover.
  if (spec.target === 'existing') return null;
  const need = watchdogNeed(spec, opts);
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

/**
 * Configurations whose thirds are too small for drift at their limit to be decided (lib/protocol/
 * drift.ts): a steady target (a true ratio of 1) would read an interval that straddles the limit, so
 * its repeats would read NOT JUDGED on drift. Judged under the reference tail (drift.ts
 * REFERENCE_TAIL_INDEX: before a sample exists the rig must assume one), and naming the repeat length
 * that would be enough. A warning, never a refusal: a lighter tail than the reference's may decide
 * sooner, and the page judges each repeat on its own samples.
 */
export function driftWarnings(spec: Pick<CampaignSpec, 'sustained'>): string[] {
  const s = spec.sustained;
  if (!s || s.drift === 'noted') return [];
  const need = referenceThirdSamples(1, s.driftLimit);
  if (need === null) return [];
  const out: string[] = [];
  for (const c of s.configurations) {
    const perSecond = c.eventsPerSecond / c.batch;
    const third = Math.floor(s.repeatSeconds / 3);
    const n = Math.floor(perSecond * third);
    if (n >= need) continue;
    const seconds = 3 * Math.ceil(need / perSecond);
    out.push(
      `WARNING configuration ${c.name}: thirds of ${n} samples (${fmtRate(perSecond)} requests/s for ${third} s of a ${s.repeatSeconds}-s repeat) cannot tell a steady p99 (drift x1) from the drift limit x${s.driftLimit} at 95 %: ` +
        `a third needs about ${need} samples (with a tail of index ${REFERENCE_TAIL_INDEX}, p99.9 = ${(10 ** (1 / REFERENCE_TAIL_INDEX)).toFixed(1)} x p99), so a repeat that does not drift will likely read NOT JUDGED on drift; set sustained.repeatSeconds >= ${seconds}`,
    );
  }
  return out;
}

const fmtRate = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/**
 * Bytes a seeded history row takes on disk at the least: the usage_events row (its jsonb properties,
 * ~60 bytes of tuple header and columns) and its indexes, without the WAL it writes on the way in.
 * A lower bound, so that a refusal on it is never wrong: the true figure is larger.
 */
export const SEED_BYTES_PER_ROW_AT_LEAST = 100;

const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/**
 * A seed that cannot fit where it goes, or null: on the local target the free space of the folder
 * the clusters live in (`freeBytes`, measured by the caller), on AWS the RDS volume (sizeGb). Pure.
 */
export function seedDiskProblem(spec: Pick<CampaignSpec, 'target' | 'seed' | 'aws'>, freeBytes?: { bytes: number; where: string }): { path: string[]; message: string } | null {
  const need = spec.seed.historyRows * SEED_BYTES_PER_ROW_AT_LEAST;
  const fix = 'lower seed.historyRows';
  if (spec.target === 'aws' && spec.aws) {
    const have = spec.aws.database.storage.sizeGb * 1024 ** 3;
    if (need <= have) return null;
    return { path: ['seed', 'historyRows'], message: `${spec.seed.historyRows} history rows need at least ${gb(need)} (${SEED_BYTES_PER_ROW_AT_LEAST} bytes a row, indexes included), more than the RDS volume's ${spec.aws.database.storage.sizeGb} GB (aws.database.storage.sizeGb): ${fix}, or raise sizeGb` };
  }
  if (spec.target === 'local' && freeBytes && need > freeBytes.bytes) {
    return { path: ['seed', 'historyRows'], message: `${spec.seed.historyRows} history rows need at least ${gb(need)} (${SEED_BYTES_PER_ROW_AT_LEAST} bytes a row, indexes included), more than the ${gb(freeBytes.bytes)} free in ${freeBytes.where}: ${fix}, or free space there (RIG_PG_DATA_ROOT moves the clusters)` };
  }
  return null;
}

/**
 * The too-short repeats of sampleWarnings as a refusal: every repeat of them fails "samples" whatever
 * the service does, so the campaign could only end NOT-HELD. `--allow-unjudgeable` lets a smoke run through.
 */
export function unjudgeableProblem(spec: Pick<CampaignSpec, 'sustained'>): { path: string[]; message: string } | null {
  const warnings = sampleWarnings(spec);
  if (!warnings.length) return null;
  return {
    path: ['sustained', 'repeatSeconds'],
    message: `${warnings.map((w) => w.replace(/^WARNING /, '')).join('; ')}. Give --allow-unjudgeable to run it anyway (a smoke run whose verdict cannot be HELD)`,
  };
}

/**
 * What each step typically takes, in minutes, as opposed to what it is allowed (STEP_ALLOWANCE_MINUTES,
 * which the watchdog covers): the dry run's "expected" column and docs/setup.md's durations. Measured on
 * the 2-core development host (docs/setup.md, "How long it takes": a whole rehearsal in 506 s): calibration
 * ~1.5 min, a local cluster and service ~15 s, bring-up and teardown seconds, the seed at ~38,000 rows/s
 * plus ~30 s of settle. An RDS instance takes ~10-15 min to create and ~5-10 min to delete (RDS User
 * Guide, "Creating an Amazon RDS DB instance"): the AWS figures are the larger ends, the creation split
 * between provisioning (the creates and launches, ~2 min) and the database step (the rest).
 */
export const STEP_EXPECTED_MINUTES = {
  calibrate: 1.5,
  provision: { local: 0.25, aws: 2, existing: 0.1 },
  database: { local: 0, aws: 13, existing: 0 },
  'bring-up': { local: 0.2, aws: 1, existing: 0.2 },
  teardown: { local: 0.2, aws: 10, existing: 0 },
  report: 0.2,
} as const;
export const SEED_ROWS_PER_SECOND_EXPECTED = 38_000;
export const SETTLE_EXPECTED_SECONDS = 30;

/** The minutes each step of the plan from provisioning on is expected to take, in all (the cost's "expected"). */
export function expectedFromProvisioning(spec: CampaignSpec): number {
  const parts = fullPlan(spec);
  const from = parts.findIndex((p) => p.step === 'provision');
  return round1(parts.slice(from).reduce((a, p) => a + p.expected, 0));
}

/** The whole plan from calibration to the report, each step with its expected and its allowed minutes. */
export function fullPlan(spec: CampaignSpec): Array<PlanPart & { expected: number }> {
  const t = spec.target;
  const expected: Record<PlanStep, number> = {
    calibrate: spec.calibrate ? STEP_EXPECTED_MINUTES.calibrate : 0,
    provision: STEP_EXPECTED_MINUTES.provision[t],
    database: STEP_EXPECTED_MINUTES.database[t],
    'bring-up': STEP_EXPECTED_MINUTES['bring-up'][t] + (calibratesDatabase(spec) ? DB_CALIBRATION_MINUTES.expected : 0),
    seed: (spec.seed.historyRows / SEED_ROWS_PER_SECOND_EXPECTED + Math.min(SETTLE_EXPECTED_SECONDS, spec.seed.settleTimeoutSeconds)) / 60,
    measuring: measuringSecondsLeft(spec, 0) / 60,
    teardown: STEP_EXPECTED_MINUTES.teardown[t],
    report: STEP_EXPECTED_MINUTES.report,
  };
  return planFrom(spec, planSteps(spec)[0]).map((p) => ({ ...p, expected: round1(expected[p.step]) }));
}
