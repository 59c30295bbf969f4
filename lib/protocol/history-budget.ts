// The campaign's plan in workflow-history events: how many its benchCampaign history would hold, and
// whether that passes the server's warning. Pure (workflows and the client both call it).
//
// Why: a Temporal server warns at 10,240 events in one history and terminates the workflow at 51,200
// (the defaults of limit.historyCount.warn / .error; Temporal Cloud's are the same). The lists in a spec
// have no maximum of their own: an interleaved ladder of about 370 units passes the warning, and about
// 1,800 reach the limit, which would end a series mid-night with its rig up (the watchdog is left to
// tear it down). So a plan past the warning is refused before anything is provisioned, naming how many
// units fit; a longer study is several campaigns (a schedule, or one per variant).
//
// The count is an upper bound from how the workflow issues its commands (workflows/campaign.ts, its phases): every
// activity is 6 events (scheduled, started, completed, and the workflow task that takes its result:
// scheduled, started, completed), a timer 5 (started, fired, and its task), a signal to another
// workflow 5 (initiated, signaled, and its task). Retries of an activity add none (the server keeps
// them). Measured against recorded histories: the variants test's 4 units took 226 events in all.
//
// Load nodes (issue 37): a repeat on N > 1 nodes is N runNodeLoad activities and a judgeNodeRepeat
// where one node has a runRepeat, and the campaign makes its nodes once (startLoadNodes, then each
// node's calibration). Counted unless `countLoadNodes: false`: the workflow asks for that only to keep
// the count of a campaign started before they were counted (workflows/phases/spec.ts,
// patched('history-budget-load-nodes')), whose replay must not be refused now.
import { campaignLoadNodes, loadNodesOf } from './load-nodes';
import { calibratesOnRigNode, type CampaignSpec } from './spec';
import { measuringOrder, measuringSeries, warmsUpBefore } from './variants';

/** The server's warning (limit.historyCount.warn): the bound a plan must stay under. */
export const HISTORY_WARN_EVENTS = 10_240;
/** The server's limit (limit.historyCount.error): the workflow is terminated there. */
export const HISTORY_LIMIT_EVENTS = 51_200;

const ACTIVITY = 6;
const TIMER = 5;
const SIGNAL = 5;

/**
 * Everything outside the measuring units: about 25 activities (spec, claim, open, lease, calibrate,
 * clean-checks, provision, prepare, service, bring-up, seed, ceiling, denominator, teardown, report),
 * the watchdog's start, the lease's and the watchdog's signals, the search-attribute upserts, start and end.
 */
export const FIXED_EVENTS = 25 * ACTIVITY + 4 * SIGNAL + 40;

/** Markers of the load nodes' patches a campaign on N > 1 nodes records (one event each). */
const LOAD_NODE_MARKERS = 4;

/**
 * Events of making a campaign's load nodes (N > 1 in its largest configuration; 0 otherwise):
 * startLoadNodes and, with `calibrate`, each node's calibration, each a step of its own (an activity
 * and its search-attribute upsert), and the patches' markers.
 */
export function loadNodeFixedEvents(spec: CampaignSpec): number {
  const nodes = campaignLoadNodes(spec);
  if (nodes <= 1) return 0;
  const steps = 1 + (spec.calibrate ? nodes : 0);
  return steps * (ACTIVITY + 1) + LOAD_NODE_MARKERS;
}

/** Options of the count: `countLoadNodes` false counts as before load nodes were counted (a campaign in flight). */
export interface BudgetOptions {
  countLoadNodes?: boolean;
}

export interface HistoryBudget {
  /** Measuring units (repeats, or a ladder's rung repeats) in the plan. */
  units: number;
  /** Events of the units, in all. */
  unitEvents: number;
  /** The largest one unit takes (a change of variant, a warm-up). */
  maxPerUnit: number;
  /** Events outside the units: FIXED_EVENTS and, with load nodes, making them (loadNodeFixedEvents). */
  fixedEvents: number;
  /** The whole history, at most. */
  events: number;
}

/**
 * Events one unit adds: its repeat, its cool-down, a hold-until to the watchdog, and what precedes it.
 * `nodes`: the load nodes its repeat is sent from (1: runRepeat; N > 1: N runNodeLoad and a judgeNodeRepeat).
 */
function unitEvents(spec: CampaignSpec, warmsUp: boolean, changesVariant: boolean, nodes: number): number {
  let n = ACTIVITY + TIMER + SIGNAL; // runRepeat, the cool-down after it, the watchdog's hold-until (when the plan ran over)
  if (nodes > 1) n += nodes * ACTIVITY; // each node's runNodeLoad, beside the judge that stands where runRepeat was
  if (calibratesOnRigNode(spec.target)) n += ACTIVITY; // the app node's evidence after each repeat (aws)
  if (changesVariant) n += ACTIVITY * (spec.variants?.fresh ? 2 : 1); // applyVariant, and a fresh seed
  if (warmsUp) n += ACTIVITY + TIMER; // the warm-up and its cool-down
  return n;
}

export function historyBudget(spec: CampaignSpec, opts: BudgetOptions = {}): HistoryBudget {
  const countNodes = opts.countLoadNodes ?? true;
  const series = measuringSeries(spec);
  const order = measuringOrder(spec);
  let total = 0;
  let max = 0;
  order.forEach((u, i) => {
    const changes = (spec.variants !== undefined && i === 0) || (i > 0 && order[i - 1].configuration.variant !== u.configuration.variant);
    // Only sustained repeats fan out (a ladder with N > 1 is refused by the spec).
    const nodes = countNodes && series?.kind === 'sustained' ? loadNodesOf(spec, u.configuration) : 1;
    const n = unitEvents(spec, series !== null && warmsUpBefore(order, i, series.kind), changes, nodes);
    total += n;
    max = Math.max(max, n);
  });
  const fixed = FIXED_EVENTS + (countNodes ? loadNodeFixedEvents(spec) : 0);
  return { units: order.length, unitEvents: total, maxPerUnit: max, fixedEvents: fixed, events: fixed + total };
}

/** Why the plan's history would pass the server's warning, and the fix; null when it fits. */
export function historyProblem(spec: CampaignSpec, opts: BudgetOptions = {}): string | null {
  const b = historyBudget(spec, opts);
  if (b.events <= HISTORY_WARN_EVENTS) return null;
  const fits = Math.floor((HISTORY_WARN_EVENTS - b.fixedEvents) / Math.max(1, b.maxPerUnit));
  const nodes = (opts.countLoadNodes ?? true) && campaignLoadNodes(spec) > 1;
  const lists = spec.ladder ? 'ladder.rates, ladder.rungs' : `sustained.configurations, sustained.repeats${nodes ? ', load.nodes' : ''}`;
  return (
    `the plan has ${b.units} measuring units, whose workflow history would reach about ${b.events} events ` +
    `(${b.unitEvents} for the units, up to ${b.maxPerUnit} each, plus ${b.fixedEvents} for the other steps), past the server's warning at ${HISTORY_WARN_EVENTS} ` +
    `(at ${HISTORY_LIMIT_EVENTS} it terminates the campaign with its rig up): keep a campaign to about ${fits} units ` +
    `(fewer ${lists}${spec.variants ? ' or variants' : ''}) and run the rest as further campaigns`
  );
}
