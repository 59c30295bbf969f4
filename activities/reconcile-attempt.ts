// Reconciliation of one attempt (a repeat's, a warm-up's): what the database holds for its run tag,
// counted as the owner role in the fixtures' partition and written to reconcile.json before anyone
// judges from it. Safe to run twice: a count already written is read back, never taken again (a
// worker lost after counting left it there).
import fs from 'node:fs';
import { RECONCILE } from '../lib/evidence/layout';
import type { ReconcileFile } from '../lib/evidence/records';
import type { EvidenceStore } from '../lib/evidence/store';
import { detectFixtures } from '../lib/targets/fixtures-scope';
import { reconcile, type Reconciliation } from '../lib/targets/reconcile';
import type { Target } from '../lib/targets/target';

/**
 * `runTag` is the attempt's tag; a repeat sent from several load nodes (issue 37) passes every node's
 * tag (`<tag>.n<i>`): their rows are counted together, as the merged stream's claims are, and each
 * node's count is kept beside the sum in reconcile.json.
 */
export async function reconcileAttempt(target: Target, store: EvidenceStore, campaignId: string, dir: string, runTag: string | readonly string[], everyTenant = false): Promise<{ rows: number; quantity: number }> {
  const rel = `${dir}/${RECONCILE}`;
  if (store.exists(rel)) {
    const kept = JSON.parse(fs.readFileSync(store.path(rel), 'utf8')) as ReconcileFile;
    return { rows: kept.rows_written, quantity: kept.quantity_gained };
  }
  const urls = await target.dbUrls(campaignId);
  const scope = await detectFixtures(urls.ownerUrl);
  // A load of several tenants (issue 35) wrote under each tenant: its rows are counted over them all.
  const tenantId = everyTenant ? undefined : scope.tenantId;
  if (typeof runTag !== 'string') {
    const nodes: Reconciliation[] = [];
    for (const tag of runTag) nodes.push(await reconcile(urls.ownerUrl, { runTag: tag, livemode: scope.livemode, tenantId }));
    const sum = (f: (r: Reconciliation) => number) => nodes.reduce((a, r) => a + f(r), 0);
    store.writeJson(rel, {
      run_tag: runTag.join(','),
      rows_written: sum((r) => r.rows),
      quantity_gained: sum((r) => r.quantity),
      livemode: scope.livemode,
      other_mode_rows: sum((r) => r.otherModeRows),
      checked_at: new Date().toISOString(),
      nodes: nodes.map((r) => ({ run_tag: r.runTag, rows_written: r.rows, quantity_gained: r.quantity, other_mode_rows: r.otherModeRows })),
    } satisfies ReconcileFile & { other_mode_rows: number; nodes: unknown });
    return { rows: sum((r) => r.rows), quantity: sum((r) => r.quantity) };
  }
  const rec = await reconcile(urls.ownerUrl, { runTag, livemode: scope.livemode, tenantId });
  store.writeJson(rel, {
    run_tag: runTag,
    rows_written: rec.rows,
    quantity_gained: rec.quantity,
    livemode: rec.livemode,
    other_mode_rows: rec.otherModeRows,
    checked_at: new Date().toISOString(),
  } satisfies ReconcileFile & { other_mode_rows: number });
  return { rows: rec.rows, quantity: rec.quantity };
}
