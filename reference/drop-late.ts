// The lossy build's switch (HC_DROP_LATE_MS, issue 35): a TEST SWITCH, never a setting to measure with.
// A service that silently loses late events: an event whose client timestamp is more than
// HC_DROP_LATE_MS before the request's arrival is answered as accepted (201, counted in `accepted`)
// but never written. What the rig's reconciliation must catch: the repeat's rows fall short of the
// events claimed by exactly the late events among them, and its rows check fails saying so. Events
// without a timestamp, and on-time or out-of-order ones within the threshold, are the normal service's.
import type { ValidEvent } from './validate';

/** The events the lossy build keeps: all but those stamped more than lateMs before nowMs. */
export function dropLateEvents(events: ValidEvent[], nowMs: number, lateMs: number): ValidEvent[] {
  return events.filter((e) => e.occurredAtMs === null || nowMs - e.occurredAtMs <= lateMs);
}
