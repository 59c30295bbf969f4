// test-mode: unit
// RDS's backup and maintenance windows placed after the campaign's plan (lib/targets/aws/rds-windows.ts):
// RDS's formats (weekly ddd:hh24:mi-ddd:hh24:mi, daily hh24:mi-hh24:mi, UTC), at least 30 minutes
// each, the two never overlapping, and neither inside the plan's weekly minutes, for plans generated
// across every hour of the week and lengths up to a day; longer plans say what falls inside.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rdsWindows, windowMinutes, WINDOW_MINUTES } from '../../../lib/targets/aws/rds-windows';

const WEEK = 7 * 24 * 60;
const overlaps = (a: Array<[number, number]>, b: Array<[number, number]>) => a.some(([x, y]) => b.some(([u, v]) => x < v && u < y));
/** The plan's minutes of the week, as [from, to) spans. */
function planMinutes(start: Date, end: Date): Array<[number, number]> {
  const at = (d: Date) => d.getUTCDay() * 1440 + d.getUTCHours() * 60 + d.getUTCMinutes();
  const len = Math.ceil((end.getTime() - start.getTime()) / 60_000);
  const a = at(start);
  return a + len <= WEEK ? [[a, a + len]] : [[a, WEEK], [0, (a + len) % WEEK]];
}

test('an example: a 10-hour plan from Thursday 22:17 UTC', () => {
  const w = rdsWindows(new Date('2026-12-03T22:17:30Z'), new Date('2026-12-04T08:17:30Z'));
  assert.deepEqual(w, { backup: '09:18-09:48', maintenance: 'fri:10:18-fri:10:48', backupInsidePlan: false, maintenanceInsidePlan: false });
});

test('for plans starting at every hour of the week and lasting up to 22 h: RDS formats, 30 min, no overlap, outside the plan', () => {
  for (let hour = 0; hour < 7 * 24; hour++) {
    for (const minutes of [1, 45, 258, 600, 1000, 22 * 60]) {
      const start = new Date(Date.UTC(2026, 10, 29, hour, 7 * (hour % 9)));
      const end = new Date(start.getTime() + minutes * 60_000);
      const w = rdsWindows(start, end);
      const label = `${start.toISOString()} + ${minutes} min: ${JSON.stringify(w)}`;
      assert.match(w.backup, /^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/, label);
      assert.match(w.maintenance, /^(mon|tue|wed|thu|fri|sat|sun):([01]\d|2[0-3]):[0-5]\d-(mon|tue|wed|thu|fri|sat|sun):([01]\d|2[0-3]):[0-5]\d$/, label);
      const backup = windowMinutes(w.backup);
      const maintenance = windowMinutes(w.maintenance);
      assert.equal(maintenance.reduce((s, [a, b]) => s + b - a, 0), WINDOW_MINUTES, label);
      assert.equal(backup.reduce((s, [a, b]) => s + b - a, 0), 7 * WINDOW_MINUTES, label);
      assert.equal(overlaps(backup, maintenance), false, `the windows overlap: ${label}`);
      assert.equal(w.backupInsidePlan, false, label);
      assert.equal(overlaps(backup, planMinutes(start, end)), false, `backup inside the plan: ${label}`);
      assert.equal(overlaps(maintenance, planMinutes(start, end)), false, `maintenance inside the plan: ${label}`);
    }
  }
});

test('a plan too long for a daily window outside it says so; the windows still never overlap', () => {
  const start = new Date('2026-12-01T00:00:00Z');
  const w = rdsWindows(start, new Date(start.getTime() + 30 * 3600_000));
  assert.equal(w.backupInsidePlan, true);
  assert.equal(w.maintenanceInsidePlan, false);
  assert.equal(overlaps(windowMinutes(w.backup), windowMinutes(w.maintenance)), false);
  assert.equal(rdsWindows(start, new Date(start.getTime() + 8 * 24 * 3600_000)).maintenanceInsidePlan, true);
  // A deadline already past: the windows start an hour after provisioning.
  assert.equal(rdsWindows(start, new Date(start.getTime() - 3600_000)).backup, '01:00-01:30');
});
