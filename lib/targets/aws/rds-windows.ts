// Pure: where RDS may run its backup and its maintenance, placed outside the campaign's plan so that
// neither lands inside a repeat. RDS's rules (RDS API reference, CreateDBInstance): both in UTC, each
// at least 30 minutes, and they must not overlap; PreferredMaintenanceWindow is weekly,
// `ddd:hh24:mi-ddd:hh24:mi` (mon|tue|wed|thu|fri|sat|sun), PreferredBackupWindow is daily,
// `hh24:mi-hh24:mi`. With BackupRetentionPeriod 0 no automated backup is taken, but the window is
// still set, so that RDS's random default cannot collide with the maintenance window we chose.
//
// The plan runs from `start` (provisioning) to `end` (the watchdog's deadline: the rig cannot outlive
// it unless `rig campaign extend` moves it, and then the windows are not moved). The backup window
// begins a margin after `end` (teardown runs then), the maintenance window right after it. The daily
// backup window is outside the plan on every day only if the plan is shorter than a day minus the
// margin and the window; otherwise it falls in the plan's hours on some day, harmless with backups
// off, and `backupInsidePlan` says so. The weekly window is outside while the plan is under a week.
export const WINDOW_MINUTES = 30;
/** After the deadline: teardown's time, so that nothing starts while the rig is still being removed. */
export const AFTER_DEADLINE_MINUTES = 60;
/** Between the backup and the maintenance window: they must not overlap, and touching is not tried. */
export const BETWEEN_WINDOWS_MINUTES = 30;

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const MINUTE = 60_000;

export interface RdsWindows {
  /** PreferredBackupWindow, daily, UTC: hh24:mi-hh24:mi. */
  backup: string;
  /** PreferredMaintenanceWindow, weekly, UTC: ddd:hh24:mi-ddd:hh24:mi. */
  maintenance: string;
  /** True when the plan is too long for a daily window outside it (backups are off, so none runs). */
  backupInsidePlan: boolean;
  /** True when the plan is a week or longer: no weekly window can be outside it. */
  maintenanceInsidePlan: boolean;
}

const two = (n: number) => String(n).padStart(2, '0');
const hhmm = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
const dddhhmm = (d: Date) => `${DAYS[d.getUTCDay()]}:${hhmm(d)}`;

/** The windows for a plan from `start` to `end`. */
export function rdsWindows(start: Date, end: Date): RdsWindows {
  // A deadline already past (a retry after it, the reaper's tests) is a plan that ends as it starts.
  end = new Date(Math.max(end.getTime(), start.getTime()));
  // Whole minutes: RDS takes hh24:mi.
  const backupStart = new Date(Math.ceil((end.getTime() + AFTER_DEADLINE_MINUTES * MINUTE) / MINUTE) * MINUTE);
  const backupEnd = new Date(backupStart.getTime() + WINDOW_MINUTES * MINUTE);
  const maintStart = new Date(backupEnd.getTime() + BETWEEN_WINDOWS_MINUTES * MINUTE);
  const maintEnd = new Date(maintStart.getTime() + WINDOW_MINUTES * MINUTE);
  const planMinutes = (end.getTime() - start.getTime()) / MINUTE;
  return {
    backup: `${hhmm(backupStart)}-${hhmm(backupEnd)}`,
    maintenance: `${dddhhmm(maintStart)}-${dddhhmm(maintEnd)}`,
    backupInsidePlan: planMinutes + AFTER_DEADLINE_MINUTES + WINDOW_MINUTES > 24 * 60,
    maintenanceInsidePlan: planMinutes + AFTER_DEADLINE_MINUTES + 2 * WINDOW_MINUTES + BETWEEN_WINDOWS_MINUTES > 7 * 24 * 60,
  };
}

/** Parses either form into minutes of the week [from, to) (a daily window: its seven occurrences). */
export function windowMinutes(window: string): Array<[number, number]> {
  const weekly = /^(sun|mon|tue|wed|thu|fri|sat):(\d\d):(\d\d)-(sun|mon|tue|wed|thu|fri|sat):(\d\d):(\d\d)$/.exec(window);
  const week = 7 * 24 * 60;
  const span = (a: number, b: number): Array<[number, number]> => (b > a ? [[a, b]] : [[a, week], [0, b]]);
  if (weekly) {
    const at = (d: string, h: string, m: string) => DAYS.indexOf(d as (typeof DAYS)[number]) * 1440 + Number(h) * 60 + Number(m);
    return span(at(weekly[1], weekly[2], weekly[3]), at(weekly[4], weekly[5], weekly[6]));
  }
  const daily = /^(\d\d):(\d\d)-(\d\d):(\d\d)$/.exec(window);
  if (!daily) throw new Error(`not an RDS window: ${window}`);
  const a = Number(daily[1]) * 60 + Number(daily[2]);
  const b = Number(daily[3]) * 60 + Number(daily[4]);
  return [0, 1, 2, 3, 4, 5, 6].flatMap((d) => span(d * 1440 + a, (d * 1440 + b + (b > a ? 0 : 1440)) % week || week));
}
