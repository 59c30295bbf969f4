// test-mode: unit
// A configuration's workload (issue 35) in the spec: the examples parse (a spike of 5x the base for
// 30 s, Poisson arrivals, a trace replayed at speed 2 whose every request is intended at its recorded
// offset halved, within 1 ms); bad arrivals are refused before anything runs, naming the field and the
// fix; a trace's file is read by `rig campaign start`'s spec loading and made absolute; and a spec
// without a workload parses and plans exactly as before (no key added, the same dry-run plan as with
// the explicit constant shape).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { dryRunPlan } from '../../client/dry-run';
import { loadSpec, SpecInputError } from '../../client/spec-input';
import { parseCampaignSpec, type CampaignSpecInput } from '../../lib/protocol/spec';
import { loadArrivals } from '../../lib/loadgen/trace-file';
import { arrivalSchedule } from '../../lib/protocol/arrivals';
import { specIssues } from '../harness/spec-issues';

const root = path.resolve(__dirname, '..', '..');
const read = (name: string) => JSON.parse(fs.readFileSync(path.join(root, 'examples', `${name}.json`), 'utf8')) as CampaignSpecInput & Record<string, unknown>;
const now = new Date('2026-12-05T12:00:00Z');

const errorsOf = specIssues;

/** The spike example with its one configuration's arrivals replaced. */
function spikeWith(arrivals: unknown): unknown {
  const s = read('spike');
  const c = s.sustained!.configurations[0];
  return { ...s, sustained: { ...s.sustained, configurations: [{ ...c, workload: { arrivals } }] } };
}

test('examples/spike.json spikes to 5x its base for 30 s, examples/poisson.json has Poisson arrivals; both plan their requests from the schedule', () => {
  const spike = parseCampaignSpec(read('spike'));
  const c = spike.sustained!.configurations[0];
  assert.deepEqual(c.workload?.arrivals, { shape: 'spike', peak: 5 * c.eventsPerSecond, at: 40, for: 30 });
  assert.deepEqual([c.workload?.phaseP99LimitMs, c.workload?.recoveryLimitSeconds], [{ during: 250 }, 20]);
  const p = dryRunPlan('s-1', spike, now);
  // 200 requests/s for 90 s and 1,000 for 30 s.
  assert.equal(p.configurations[0].requestsPerRepeat, 200 * 90 + 1000 * 30);
  assert.equal(p.configurations[0].arrivals, 'spike 200 -> 1000 ev/s at 40 s for 30 s');
  const poisson = parseCampaignSpec(read('poisson'));
  assert.ok(poisson.sustained!.configurations.every((x) => x.workload?.arrivals?.shape === 'poisson'));
});

test('examples/trace.json replays its trace file at speed 2: every request of the trace, each intended at its offset halved (within 1 ms), in the 30-s repeat', () => {
  const spec = loadSpec({ file: path.join(root, 'examples', 'trace.json') });
  const c = spec.sustained!.configurations[0];
  const file = path.join(root, 'examples', 'traces', 'bursty-api.txt');
  assert.deepEqual(c.workload?.arrivals, { shape: 'trace', file, format: 'offsets', speed: 2 }, 'the path made absolute from the spec file');
  const offsetsMs = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map(Number);
  const arrivals = loadArrivals(c.workload);
  assert.equal(arrivals?.shape, 'trace');
  const s = arrivalSchedule({ rate: c.eventsPerSecond, batch: c.batch, seconds: spec.sustained!.repeatSeconds, arrivals });
  assert.equal(s.count, offsetsMs.length, 'the whole trace fits the repeat at speed 2');
  for (let k = 0; k < s.count; k++) assert.ok(Math.abs(s.at(k) - (offsetsMs[k] * 1000) / 2) <= 1000, `request ${k}: intended ${s.at(k)} µs, the trace says ${offsetsMs[k]} ms / 2`);
  assert.match(dryRunPlan('t-1', spec, now).configurations[0].arrivals ?? '', /^trace .*bursty-api\.txt \(offsets\) at speed 2$/);
});

test('without a workload the spec parses as before (no key added) and plans the same as with the explicit constant shape', () => {
  for (const name of ['rehearsal', 'full', 'finding-hot-row', 'own-service']) {
    const input = read(name);
    const spec = parseCampaignSpec(input);
    for (const c of spec.sustained?.configurations ?? []) assert.equal('workload' in c, false, `${name}: ${c.name} gains no workload key`);
    if (!input.sustained) continue;
    const constant = { ...input, sustained: { ...input.sustained, configurations: input.sustained.configurations.map((c) => ({ ...c, workload: { arrivals: { shape: 'constant' } } })) } };
    assert.deepEqual(dryRunPlan('x', parseCampaignSpec(constant), now), dryRunPlan('x', spec, now), `${name}: constant arrivals are today's`);
  }
});

test('bad arrivals are refused before anything runs, naming the field and the fix', () => {
  const cfg = 'sustained.configurations[0].workload.arrivals';
  assert.deepEqual(errorsOf(spikeWith({ shape: 'spike', peak: 1000, at: 100, for: 30 })), [
    `${cfg}.for: for must be > 0 seconds and end within the repeat (at + for <= 120 s), got 30 (sustained.repeatSeconds)`,
  ]);
  assert.deepEqual(errorsOf(spikeWith({ shape: 'spike', peak: 1000, at: 0, for: 30 })), [`${cfg}.at: at must be > 0 seconds`]);
  assert.deepEqual(errorsOf(spikeWith({ shape: 'diurnal', max: 100, period: 60 })), [`${cfg}.max: max must be at least the configuration's rate 200 ev/s (the trough), got 100`]);
  assert.deepEqual(errorsOf(spikeWith({ shape: 'ramp', to: 400, over: 600 })), [`${cfg}.over: over must be > 0 seconds and at most the repeat's 120 s, got 600 (sustained.repeatSeconds)`]);
  assert.match(errorsOf(spikeWith({ shape: 'square' }))[0], /^sustained\.configurations\[0\]\.workload\.arrivals(\.shape)?: arrivals\.shape must be one of "constant", "poisson", "ramp", "spike", "diurnal", "trace"/);
  assert.match(errorsOf(spikeWith({ shape: 'spike', peek: 1000, at: 10, for: 30 })).join('\n'), /peek/);
  assert.match(errorsOf(spikeWith({ shape: 'poisson', seed: 1.5 })).join('\n'), /seed must be a whole number/);
  assert.match(errorsOf(spikeWith({ shape: 'trace', file: 'x.txt', speed: 0 })).join('\n'), /speed must be > 0 \(2 replays the trace twice as fast\)/);
  // A spike's gates belong to a spike (or a ramp's phases to a ramp).
  const s = read('spike');
  const c0 = s.sustained!.configurations[0];
  const withWorkload = (workload: unknown) => ({ ...s, sustained: { ...s.sustained, configurations: [{ ...c0, workload }] } });
  assert.deepEqual(errorsOf(withWorkload({ arrivals: { shape: 'poisson' }, recoveryLimitSeconds: 10 })), [
    "sustained.configurations[0].workload.recoveryLimitSeconds: recoveryLimitSeconds is a spike's: arrivals are poisson; remove it, or make the arrivals a spike",
  ]);
  assert.deepEqual(errorsOf(withWorkload({ arrivals: { shape: 'ramp', to: 400, over: 60 }, phaseP99LimitMs: { during: 100 } })), [
    'sustained.configurations[0].workload.phaseP99LimitMs.during: a ramp has no phase "during" (its phases: ramp, after)',
  ]);
});

test('a trace workload: its file is read when the spec is loaded (refused naming the field), and its path made absolute for the worker', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-trace-spec-'));
  try {
    const write = (arrivals: unknown) => {
      const file = path.join(dir, 'spec.json');
      fs.writeFileSync(file, JSON.stringify(spikeWith(arrivals)));
      return file;
    };
    assert.throws(
      () => loadSpec({ file: write({ shape: 'trace', file: 'missing.txt', speed: 2 }) }),
      (e: unknown) => e instanceof SpecInputError && /sustained\.configurations\[0\]\.workload\.arrivals\.file: trace .*missing\.txt: cannot be read \(ENOENT\)/.test(e.message),
    );
    fs.writeFileSync(path.join(dir, 'bad.txt'), '0\n10\nfive\n');
    assert.throws(() => loadSpec({ file: write({ shape: 'trace', file: 'bad.txt' }) }), /line 3: 'five' is not an offset in ms/);
    fs.writeFileSync(path.join(dir, 'trace.txt'), Array.from({ length: 2000 }, (_, i) => i * 50).join('\n'));
    const spec = loadSpec({ file: write({ shape: 'trace', file: 'trace.txt', speed: 2 }) });
    assert.deepEqual(spec.sustained!.configurations[0].workload?.arrivals, { shape: 'trace', file: path.join(dir, 'trace.txt'), format: 'offsets', speed: 2 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
