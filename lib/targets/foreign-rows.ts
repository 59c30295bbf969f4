// Rows in the fixtures' partition that the rig did not write: on a deployment the rig did not make
// (target "existing"), seeding history beside someone else's rows changes what is measured (the
// table's size, its indexes, autovacuum's work) in a way the spec does not say, so the seed refuses
// unless the user allows it (seed.allowForeignRows). Every row the rig writes carries a tag in
// properties: rig_seed (history) or rig_run (the load, bring-up's probe, pgbench). The partition is
// the fixtures' livemode: usage_events of every tenant in that mode, since they share its table and
// indexes. Counted as the owner (row-level security does not bind it), at most LIMIT+1 rows, so a
// large table is not scanned to the end for a number nobody needs exactly.
import { RUN_TAG_PROPERTY } from '../protocol/hardcount-api';
import { withClient, type Db } from './db';
import { detectFixtures } from './fixtures-scope';
import { SEED_TAG_PROPERTY } from './seed-rows';

const LIMIT = 1000;

export interface ForeignRows {
  livemode: boolean;
  /** Rows found without a rig tag, up to LIMIT (more: `atLeast`). */
  rows: number;
  atLeast: boolean;
}

export async function foreignRows(db: Db): Promise<ForeignRows> {
  return withClient(
    db,
    async (c) => {
      const scope = await detectFixtures(c);
      const r = await c.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM (
           SELECT 1 FROM usage_events WHERE livemode = $1 AND NOT (properties ?| $2::text[]) LIMIT ${LIMIT + 1}) AS f`,
        [scope.livemode, [SEED_TAG_PROPERTY, RUN_TAG_PROPERTY]],
      );
      const n = Number(r.rows[0].n);
      return { livemode: scope.livemode, rows: Math.min(n, LIMIT), atLeast: n > LIMIT };
    },
    'rig-seed-check',
  );
}

/** The refusal's words: what was found and the two ways on. */
export function foreignRowsRefusal(f: ForeignRows): string {
  return (
    `seed refused: the fixtures' partition (usage_events with livemode=${f.livemode}) holds ${f.atLeast ? 'more than ' : ''}${f.rows} row(s) the rig did not write ` +
    `(no ${SEED_TAG_PROPERTY} or ${RUN_TAG_PROPERTY} tag): history seeded beside them measures a table the spec does not describe. ` +
    'Set seed.allowForeignRows to true to seed anyway (those rows are never counted: every repeat is reconciled by its run tag), or seed.historyRows to 0'
  );
}
