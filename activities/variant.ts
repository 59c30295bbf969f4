// applyVariant: before the repeats of another variant (issue 13), the rig takes that variant's
// settings (Target.applySettings: database parameters, the service's switches, restarting what must
// restart) and the evidence records what took effect, read back, as variants/NN-<variant>.json. It
// returns the service's URL, which a restarted service may have changed.
// It ends with a CHECKPOINT (after the rollup rebuild, when there is one), so the variant's first
// repeat does not pay for pages the change left dirty (issue 31); the record keeps what it wrote.
// Safe to run twice: the target's change is idempotent, and a change already recorded is not redone
// (a CHECKPOINT repeated by a retry is harmless).
import fs from 'node:fs';
import { variantFile } from '../lib/evidence/layout';
import { settingsText } from '../lib/evidence/report/variants';
import { rebuildRollup } from '../reference/rollup';
import { checkpoint, checkpointLine, type CheckpointRecord } from '../lib/targets/checkpoint';
import { EvidenceStore } from '../lib/evidence/store';
import { serviceLaunch, usesRollup } from '../lib/protocol/service-spec';
import type { VariantSettings } from '../lib/protocol/variants';
import type { AppliedSettings } from '../lib/targets/target';
import type { RigInput, StepSummary } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import { rigTarget, type ActivityDeps } from './deps';

export interface ApplyVariantInput extends RigInput {
  variant: string;
  /** 1-based number of this change of variant in the campaign (names its evidence file). */
  seq: number;
  settings: VariantSettings;
}

export interface VariantRecord {
  variant: string;
  seq: number;
  at: string;
  requested: VariantSettings;
  applied: AppliedSettings;
  /** Rows of the daily rollup recomputed before this variant (aggregate=rollup only). */
  rollupRows?: number;
  /** The CHECKPOINT that ended the change (absent in records written before issue 31). */
  checkpoint?: CheckpointRecord;
}

/** One line: the variant, what runs now, what restarted. */
export function variantSummary(r: VariantRecord): string {
  const db = settingsText(r.applied.database);
  const svc = settingsText(r.applied.service);
  const restarted = [r.applied.restarted.database.length ? `database restarted (${r.applied.restarted.database.join(', ')})` : '', r.applied.restarted.service ? 'service restarted' : '']
    .filter(Boolean)
    .join(', ');
  const rollup = r.rollupRows !== undefined ? `; daily rollup rebuilt (${r.rollupRows} rows)` : '';
  return `variant ${r.variant}: ${db}; service ${svc}${restarted ? `; ${restarted}` : '; nothing restarted'}${rollup}`;
}

export function variantActivities(deps: ActivityDeps) {
  async function applyVariant(input: ApplyVariantInput): Promise<StepSummary & { serviceUrl: string }> {
    const store = EvidenceStore.forCampaign(input.campaignId);
    const rel = variantFile(input.seq, input.variant);
    if (store.exists(rel)) {
      const done = JSON.parse(fs.readFileSync(store.path(rel), 'utf8')) as VariantRecord;
      return { summary: variantSummary(done), serviceUrl: done.applied.serviceUrl };
    }
    const target = rigTarget(deps, input.rig);
    if (!target.applySettings) throw new Error(`the ${target.name} target cannot change settings between repeats: variants are refused there`);
    const applied = await target.applySettings(input.campaignId, { database: input.settings.database, service: serviceLaunch(input.settings.service) }, (line) => heartbeat(line));
    // A variant that reads the daily rollup (aggregate=rollup) must find it whole: the rows the repeats
    // before it wrote under aggregate=scan are not in it, and an incomplete rollup answers faster than a
    // true one. Recomputed from usage_events here, as the seed does.
    let rollupRows: number | undefined;
    if (usesRollup(input.settings.service)) {
      heartbeat('rebuilding the daily rollup for aggregate=rollup');
      rollupRows = await rebuildRollup((await target.dbUrls(input.campaignId)).ownerUrl);
    }
    // Heartbeats go on through it: the checkpoint of a large shared_buffers can take a while.
    heartbeat('CHECKPOINT after the change of variant');
    const beat = setInterval(() => heartbeat('CHECKPOINT after the change of variant'), 10_000);
    const ckpt = await checkpoint((await target.dbUrls(input.campaignId)).superuserUrl, `after variant ${input.variant}${rollupRows !== undefined ? ' and the rollup rebuild' : ''}`).finally(() =>
      clearInterval(beat),
    );
    const record: VariantRecord = { variant: input.variant, seq: input.seq, at: new Date().toISOString(), requested: input.settings, applied, ...(rollupRows !== undefined ? { rollupRows } : {}), checkpoint: ckpt };
    store.writeJson(rel, record);
    const summary = variantSummary(record);
    store.appendLog('info', summary);
    store.appendLog(ckpt.error ? 'warning' : 'info', checkpointLine(ckpt));
    return { summary, serviceUrl: applied.serviceUrl };
  }
  return { applyVariant };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { applyVariant } = variantActivities(defaultDeps);
