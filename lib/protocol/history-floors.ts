// The magnitude floor of each history figure (issue 45 item 4): the smallest move, as a share of the
// figure's level before it, worth a verdict. A change below its figure's floor never alerts, neither
// the first-run step test (./step-alert.ts) nor a change point (lib/evidence/history-alert.ts); it is
// still drawn and listed by `rig history`. A spec overrides any of them in `history.floors`.
//
// The defaults come from docs/benchmarks.md's bench:sensitivity table (the minimum detectable effect
// per figure on this machine kind): a floor below what the rig can see only admits noise, one far
// above it hides what users ship. The numbers below are the first reading; the table is the source
// and they follow it when it is re-measured.

/** Floors in percent of the level before the change, by figure key; null: no floor (every move counts). */
export const DEFAULT_FLOORS_PCT: Readonly<Record<string, number | null>> = {
  p50_ms: 5,
  p99_ms: 20,
  worst_10s_p99_ms: 30,
  wal_bytes_per_event: 3,
  ceiling_evps: 5,
  // The ceiling's share of the database's floor moves with the ceiling (and with the database).
  ceiling_share: 5,
  // Passes out of repeats: a lost repeat is its own verdict; no floor.
  pass_share: null,
};

/** The figure keys a floor (and an acknowledgement) may name. */
export const FLOOR_FIGURES: readonly string[] = Object.keys(DEFAULT_FLOORS_PCT);

/** The defaults with a spec's overrides (a key given as null: no floor for that figure). */
export function floorsWith(overrides: Readonly<Record<string, number | null | undefined>> | undefined): Record<string, number | null> {
  const out: Record<string, number | null> = { ...DEFAULT_FLOORS_PCT };
  for (const [k, v] of Object.entries(overrides ?? {})) if (v !== undefined && k in out) out[k] = v;
  return out;
}

/** Whether a move of `shiftPct` (signed, % of the level before) reaches the floor; a null floor or move always does. */
export function reachesFloor(shiftPct: number | null, floorPct: number | null): boolean {
  if (floorPct === null || floorPct === 0 || shiftPct === null) return true;
  return Math.abs(shiftPct) >= floorPct;
}
