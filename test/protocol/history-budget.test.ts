// test-mode: unit
// The plan in workflow-history events (lib/protocol/history-budget.ts): a 400-unit plan is refused
// before anything is provisioned, with the reason and how many units fit; the built-in profiles and
// the examples fit; the count grows with what each unit issues (a warm-up, a change of variant, aws,
// each load node's runNodeLoad) and with making the load nodes; a campaign in flight before the nodes
// were counted keeps its old count (countLoadNodes: false, workflows/phases/spec.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadSpec } from '../../client/spec-input';
import { FIXED_EVENTS, HISTORY_WARN_EVENTS, historyBudget, historyProblem, loadNodeFixedEvents } from '../../lib/protocol/history-budget';
import { parseCampaignSpec, PROFILES, type CampaignSpecInput } from '../../lib/protocol/spec';

const root = path.resolve(__dirname, '..', '..');

/** Two variants, interleaved: every unit changes variant and warms up after it (about 27 events each, as the issue measured). */
const AB = { order: 'interleaved' as const, control: { name: 'a', database: { autovacuum_vacuum_insert_scale_factor: 0.2 } }, treatments: [{ name: 'b', database: { autovacuum_vacuum_insert_scale_factor: 0.02 } }] };

/** A ladder of `rates` rungs, each repeated `rungs` times: rates x rungs units (x 2 with variants). */
function ladder(rates: number, rungs: number, extra: Partial<CampaignSpecInput> = {}): CampaignSpecInput {
  return {
    name: 'ladder',
    target: 'local',
    watchdogMinutes: 100_000,
    seed: { customers: 20, historyRows: 0 },
    ladder: { rates: Array.from({ length: rates }, (_, i) => 100 * (i + 1)), batch: 1, rungSeconds: 5, rungs, cooldownSeconds: 1, warmupSeconds: 1 },
    ...extra,
  };
}

test('a 400-unit plan is refused with the reason, before anything is provisioned (the client check; the workflow has the same)', () => {
  // An interleaved ladder: 20 rates x 10 rungs x 2 variants.
  const spec = parseCampaignSpec(ladder(20, 10, { variants: AB }));
  const budget = historyBudget(spec);
  assert.equal(budget.units, 400);
  assert.ok(budget.events > HISTORY_WARN_EVENTS, `${budget.events} events`);
  const problem = historyProblem(spec);
  assert.match(
    problem ?? '',
    /^the plan has 400 measuring units, whose workflow history would reach about \d+ events \(\d+ for the units, up to \d+ each, plus \d+ for the other steps\), past the server's warning at 10240 \(at 51200 it terminates the campaign with its rig up\): keep a campaign to about \d+ units \(fewer ladder\.rates, ladder\.rungs or variants\) and run the rest as further campaigns$/,
  );
  // `rig campaign start` reads the spec through loadSpec: refused there, naming the file.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-budget-'));
  try {
    const file = path.join(dir, 'ladder-400.json');
    fs.writeFileSync(file, JSON.stringify(ladder(20, 10, { variants: AB })));
    assert.throws(() => loadSpec({ file }), (err: Error) => err.message === `${file}: ${problem}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the units that fit, as the refusal names them, are accepted', () => {
  const fits = Number(/keep a campaign to about (\d+) units/.exec(historyProblem(parseCampaignSpec(ladder(20, 10, { variants: AB })))!)![1]);
  assert.ok(fits > 200 && fits < 400, `${fits} units fit`);
  // 20 units per rate (10 rungs, 2 variants): as many rates as fit, then one more.
  const rates = Math.floor(fits / 20);
  assert.equal(historyProblem(parseCampaignSpec(ladder(rates, 10, { variants: AB }))), null);
  assert.notEqual(historyProblem(parseCampaignSpec(ladder(rates + 1, 10, { variants: AB }))), null);
  // Without variants a unit is cheaper: the same 400 units fit.
  assert.equal(historyProblem(parseCampaignSpec(ladder(40, 10))), null);
});

test('the built-in profiles and every example fit, far under the warning', () => {
  for (const [name, p] of Object.entries(PROFILES)) assert.equal(historyProblem(parseCampaignSpec(p)), null, name);
  for (const f of fs.readdirSync(path.join(root, 'examples')).filter((x) => x.endsWith('.json'))) {
    const spec = parseCampaignSpec(JSON.parse(fs.readFileSync(path.join(root, 'examples', f), 'utf8')));
    assert.ok(historyBudget(spec).events < HISTORY_WARN_EVENTS / 4, `${f}: ${historyBudget(spec).events} events`);
  }
});

test('what a unit issues counts: a warm-up, a change of variant, the app node\'s evidence on aws', () => {
  const plain = historyBudget(parseCampaignSpec(ladder(2, 2)));
  assert.equal(plain.events, FIXED_EVENTS + plain.unitEvents);
  // interleaved variants: every unit changes variant (and warms up after it)
  const variants = historyBudget(parseCampaignSpec(ladder(2, 2, { variants: AB })));
  assert.equal(variants.units, 2 * plain.units);
  assert.ok(variants.unitEvents / variants.units > plain.unitEvents / plain.units, 'a change of variant and its warm-up cost more per unit');
});

/** Sustained repeats of one configuration (a warm-up before the first), on `nodes` load nodes when given. */
function sustained(repeats: number, nodes?: number, extra: Partial<CampaignSpecInput> = {}): CampaignSpecInput {
  return {
    name: 'nodes',
    target: 'local',
    calibrate: true,
    watchdogMinutes: 100_000,
    seed: { customers: 20, historyRows: 0 },
    ...(nodes ? { load: { nodes } } : {}),
    sustained: { repeats, repeatSeconds: 6, cooldownSeconds: 1, warmupSeconds: 1, configurations: [{ name: 'single', eventsPerSecond: 240, batch: 1, p99LimitMs: 1000 }] },
    ...extra,
  };
}

test('load nodes count: each node\'s runNodeLoad in every repeat, and making and calibrating the nodes once', () => {
  const one = historyBudget(parseCampaignSpec(sustained(2)));
  const three = historyBudget(parseCampaignSpec(sustained(2, 3)));
  assert.equal(three.units, one.units);
  // 6 events an activity: three runNodeLoad beside the judge that stands where runRepeat was, per repeat.
  assert.equal(three.unitEvents - one.unitEvents, 2 * 3 * 6);
  // startLoadNodes and three calibrations, each an activity and its step's search-attribute upsert, and four patch markers.
  assert.equal(loadNodeFixedEvents(parseCampaignSpec(sustained(2, 3))), 4 * 7 + 4);
  assert.equal(three.fixedEvents, FIXED_EVENTS + 4 * 7 + 4);
  assert.equal(three.events, three.fixedEvents + three.unitEvents);
  // Without calibration the nodes are only made: one step.
  assert.equal(loadNodeFixedEvents(parseCampaignSpec(sustained(2, 3, { calibrate: false }))), 7 + 4);
  // One node: nothing of this (the count of every campaign before issue 37).
  assert.equal(loadNodeFixedEvents(parseCampaignSpec(sustained(2, 1))), 0);
  assert.deepEqual(historyBudget(parseCampaignSpec(sustained(2, 1))), one);
  assert.equal(one.fixedEvents, FIXED_EVENTS);
});

test('a configuration\'s own load.nodes counts for its repeats only', () => {
  const base = sustained(2);
  const mixed = parseCampaignSpec({
    ...base,
    sustained: { ...base.sustained!, configurations: [{ ...base.sustained!.configurations[0], load: { nodes: 4 } }, { name: 'batched', eventsPerSecond: 100, batch: 10, p99LimitMs: 1000 }] },
  });
  const plain = parseCampaignSpec({ ...base, sustained: { ...base.sustained!, configurations: [base.sustained!.configurations[0], { name: 'batched', eventsPerSecond: 100, batch: 10, p99LimitMs: 1000 }] } });
  assert.equal(historyBudget(mixed).unitEvents - historyBudget(plain).unitEvents, 2 * 4 * 6, "single's two repeats on four nodes; batched's on one");
  assert.equal(historyBudget(mixed).fixedEvents - FIXED_EVENTS, (1 + 4) * 7 + 4, 'the nodes are made once, as many as the largest configuration asks');
});

test('a plan that fits on one node is refused on 64, naming load.nodes; the count of a campaign in flight before nodes were counted is unchanged', () => {
  const spec = parseCampaignSpec(sustained(40, 64));
  assert.equal(historyProblem(parseCampaignSpec(sustained(40))), null);
  const problem = historyProblem(spec);
  assert.match(problem ?? '', /^the plan has 40 measuring units, .* plus \d+ for the other steps\), past the server's warning at 10240 .*keep a campaign to about \d+ units \(fewer sustained\.configurations, sustained\.repeats, load\.nodes\) and run the rest as further campaigns$/);
  // The units the refusal names fit on the same 64 nodes, and one more does not.
  const fits = Number(/keep a campaign to about (\d+) units/.exec(problem!)![1]);
  assert.equal(historyProblem(parseCampaignSpec(sustained(fits, 64))), null);
  assert.notEqual(historyProblem(parseCampaignSpec(sustained(fits + 1, 64))), null);
  // countLoadNodes: false (a campaign started before the patch, replayed): the one-node count, not refused.
  assert.deepEqual(historyBudget(spec, { countLoadNodes: false }), historyBudget(parseCampaignSpec(sustained(40))));
  assert.equal(historyProblem(spec, { countLoadNodes: false }), null);
});
