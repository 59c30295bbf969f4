// Reconciliation of one attempt (a repeat's, a warm-up's): what the database holds for its run tag,
// counted as the owner role in the fixtures' partition and written to reconcile.json before anyone
// judges from it. Safe to run twice: a count already written is read back, never taken again (a
// worker lost after counting left it there).
import fs from 'node:fs';
import { RECONCILE } from '../lib/evidence/layout';
import type { ReconcileFile } from '../lib/evidence/records';
import type { EvidenceStore } from '../lib/evidence/store';
import { detectFixtures } from '../lib/targets/fixtures-scope';
import { reconcile } from '../lib/targets/reconcile';
import type { Target } from '../lib/targets/target';

export async function reconcileAttempt(target: Target, store: EvidenceStore, campaignId: string, dir: string, runTag: string): Promise<{ rows: number; quantity: number }> {
  const rel = `${dir}/${RECONCILE}`;
  if (store.exists(rel)) {
    const kept = JSON.parse(fs.readFileSync(store.path(rel), 'utf8')) as ReconcileFile;
    return { rows: kept.rows_written, quantity: kept.quantity_gained };
  }
  const urls = await target.dbUrls(campaignId);
  const scope = await detectFixtures(urls.ownerUrl);
  const rec = await reconcile(urls.ownerUrl, { runTag, livemode: scope.livemode, tenantId: scope.tenantId });
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
