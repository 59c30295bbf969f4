// test-mode: unit
// The page's "passed" cell says what ran (lib/evidence/report/tables.ts passedLabel), as the
// campaign's closing lines do: a configuration the campaign stopped before reads "not run", never
// "0/3" (a count of passes of a service that was never loaded); one stopped halfway says how many ran.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConfigurationModel } from '../../lib/evidence/report/model-types';
import { passedLabel } from '../../lib/evidence/report/tables';

const config = (label: string, statuses: string[], planned = 3, interrupted = 0) =>
  ({ planned, repeats: statuses.map((status) => ({ status })), summary: { label, interrupted } }) as unknown as ConfigurationModel;

test('none ran: "not run", whether the model lists the planned repeats as not-run or lists none', () => {
  assert.equal(passedLabel(config('0/3', [])), 'not run (0/3 ran)');
  assert.equal(passedLabel(config('0/3', ['not-run', 'not-run', 'not-run'])), 'not run (0/3 ran)');
  assert.equal(passedLabel(config('0/3', ['interrupted'], 3, 1)), 'not run (0/3 ran) (+1 interrupted, not counted)');
});

test('some ran: the count, and how many of the planned ran; all ran: the count alone', () => {
  assert.equal(passedLabel(config('1/3', ['passed', 'failed', 'not-run'])), '1/3; only 2 of 3 ran');
  assert.equal(passedLabel(config('3/3', ['passed', 'passed', 'passed'])), '3/3');
  assert.equal(passedLabel(config('2/3', ['passed', 'failed', 'passed', 'interrupted'], 3, 1)), '2/3 (+1 interrupted, not counted)');
});
