// test-mode: unit
// Parity, like for like: the rig's E-divisive on the values (`ranks: false`) beside Apache Otava
// 0.8.0's ORIGINAL E-divisive, the permutation one that `otava analyze --orig-edivisive true` runs, on
// the same series (test/protocol/change-point-series.ts).
//
// Otava runs in its own Python (the interpreter its console script names), and the test calls the
// function its --orig-edivisive mode calls, otava.analysis.compute_change_points_orig, at the
// console's default -P 0.001. Not the console itself, for two reasons found by running it: its
// report fails whenever that mode finds a change point (0.8.0: AttributeError: 'ChangePoint' object
// has no attribute 'metric', or 'to_json' with --output json), and it draws its permutations from an
// unseeded generator, so a borderline series could change answer from one run to the next. The
// function takes a seed; the test gives it one.
//
// What is identical, and so required exactly:
//   - the search: Otava's PairDistanceCalculator and the rig's bestSplit pick the same split with the
//     same Q (to 1e-9 relative) on every series, and again within the segments left by each change
//     point found;
//   - the decision rule: Otava keeps a candidate when #{permuted best ≥ observed}/(100+1) ≤ 0.001,
//     i.e. when none of its 100 permutations reaches the observed Q; the rig with permutations 100
//     and alpha 1/101 keeps it when (1 + #)/101 ≤ 1/101, the same condition.
// What differs is only which 100 permutations each draws (NumPy's generator against the rig's). So
// where the answer is clear (a 10 % step, noise, noisy weeks with and without a step) the change
// points are the same; on the slow slide, the first change point (the largest Q: found first by
// both) is the same, and any further one sits at the edge of the level, where which 100 permutations
// were drawn decides (the test prints both).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { bestSplit, eDivisive } from '../../lib/protocol/change-points';
import { SETUP_PEERS, peerIfInstalled, skipUnless } from '../harness/needs-tool';
import { CASE_SEEDS, STEP_RUN, otavaCases } from './change-point-series';

const otava = peerIfInstalled('otava');
const skip = skipUnless(otava, 'Apache Otava (.venv/bin/otava)', SETUP_PEERS);

const SEEDS = CASE_SEEDS;
const cases = otavaCases();

/** The rig with Otava's --orig-edivisive rule: 100 permutations, kept when none reaches the observed Q. */
const AS_OTAVA = { ranks: false, permutations: 100, alpha: 1 / 101, seed: 1 } as const;

// For each case: Otava's change points (compute_change_points_orig, seeded), and its candidate split
// (index, Q) within the segments left by each prefix of the rig's change points, in the order the rig
// found them, so the search is compared step by step.
const PY = `
import json, sys
from otava.analysis import compute_change_points_orig
from otava.change_point_divisive.calculator import PairDistanceCalculator
import numpy as np
req = json.load(sys.stdin)
out = {}
for name, c in req.items():
    values = np.array(c["values"], dtype=np.float64)
    cps, _ = compute_change_points_orig(list(c["values"]), max_pvalue=0.001, seed=1)
    calc = PairDistanceCalculator(values)
    cands = []
    for k in range(len(c["found"]) + 1):
        pts = sorted(c["found"][:k])
        bounds = [0] + pts + [len(values)]
        intervals = [slice(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
        cand = calc.get_next_candidate(intervals)
        cands.append(None if cand is None else [int(cand.index), float(cand.qhat)])
    out[name] = {"found": sorted(int(p.index) for p in cps), "candidates": cands}
print(json.dumps(out))
`;

/** The interpreter Otava's console script runs under (its #! line), so a RIG_OTAVA copy brings its own. */
function otavaPython(script: string): string {
  const first = fs.readFileSync(script, 'utf8').split('\n')[0];
  if (!first.startsWith('#!')) throw new Error(`${script} has no #! line naming its Python: reinstall Otava with \`npm ci\``);
  return first.slice(2).trim();
}

/** The rig's candidate within the segments between `points`: the same walk as eDivisive's bestOver. */
function rigCandidate(values: readonly number[], points: readonly number[]): [number, number] | null {
  const bounds = [0, ...[...points].sort((a, b) => a - b), values.length];
  let best: [number, number] | null = null;
  for (let i = 0; i + 1 < bounds.length; i++) {
    const split = bestSplit(values.slice(bounds[i], bounds[i + 1]));
    if (split && (best === null || split.qhat > best[1])) best = [bounds[i] + split.tau, split.qhat];
  }
  return best;
}

test("the rig on the values matches Otava's original E-divisive (--orig-edivisive) on the same series", { skip }, () => {
  // The rig's change points in the order it keeps them (eDivisive returns them sorted; the order of
  // finding is by falling Q, which rigCandidate recovers step by step).
  const ours: Record<string, number[]> = {};
  const order: Record<string, number[]> = {};
  for (const [n, v] of Object.entries(cases)) {
    ours[n] = eDivisive(v, AS_OTAVA).map((c) => c.index);
    const left = new Set(ours[n]);
    const seq: number[] = [];
    while (left.size) {
      const c = rigCandidate(v, seq)!;
      assert.ok(left.has(c[0]), `${n}: the rig's candidate ${c[0]} after ${JSON.stringify(seq)} is not among its change points ${JSON.stringify(ours[n])}`);
      seq.push(c[0]);
      left.delete(c[0]);
    }
    order[n] = seq;
  }
  const request = Object.fromEntries(Object.entries(cases).map(([n, v]) => [n, { values: v, found: order[n] }]));
  const stdout = execFileSync(otavaPython(otava!), ['-c', PY], { input: JSON.stringify(request), encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  const theirs = JSON.parse(stdout) as Record<string, { found: number[]; candidates: Array<[number, number] | null> }>;
  const table = Object.keys(cases).map((n) => `${n.padEnd(14)} rig ${JSON.stringify(ours[n]).padEnd(12)} otava --orig-edivisive ${JSON.stringify(theirs[n].found)}`).join('\n');
  console.log(table);

  for (const [n, v] of Object.entries(cases)) {
    // The search, exactly: the same split and the same Q at every step.
    theirs[n].candidates.forEach((cand, k) => {
      const mine = rigCandidate(v, order[n].slice(0, k));
      assert.ok(cand && mine, `${n}: a candidate is missing at step ${k}`);
      assert.equal(mine[0], cand[0], `${n}, step ${k}: the rig splits at ${mine[0]}, Otava at ${cand[0]}`);
      assert.ok(Math.abs(mine[1] - cand[1]) <= 1e-9 * Math.abs(cand[1]), `${n}, step ${k}: Q ${mine[1]} against Otava's ${cand[1]}`);
    });
  }
  for (const s of SEEDS) {
    // Clear answers, the same change points: the 10 % step at run 20 (index 19) alone; nothing in noise,
    // with or without two noisy weeks; and beside the step, nothing, by both: on the values a noisy
    // week masks the step (change-points.ts, "Ranks"), the reason the rig's default is ranks.
    assert.deepEqual(ours[`step${s}`], [STEP_RUN - 1], table);
    assert.deepEqual(theirs[`step${s}`].found, ours[`step${s}`], table);
    for (const k of ['noise', 'outliersonly', 'outliers']) {
      assert.deepEqual(ours[`${k}${s}`], [], table);
      assert.deepEqual(theirs[`${k}${s}`].found, [], table);
    }
    // The slide: both keep the whole series' best split (found first), early in the slide.
    const first = order[`drift${s}`][0];
    assert.ok(first >= 15 && first <= 20, table);
    assert.ok(theirs[`drift${s}`].found.includes(first), table);
  }
});
