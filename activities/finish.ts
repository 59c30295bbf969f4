// finishCampaign: result.json and one record per step are written, the folder is sealed with its
// manifest, and the page is rendered from the files alone (lib/evidence/report). On a rig with nodes
// (AWS) that is still there, the nodes' evidence is gathered first.
// Safe to run twice: step records already written are kept, and the page is written once (the same
// evidence gives the same bytes; a page of different evidence is refused, not replaced).
import fs from 'node:fs';
import path from 'node:path';
import { BASELINE_FILE, HISTORY_ALERT_FILE, RESULT_FILE, SPEC_FILE, stepFile } from '../lib/evidence/layout';
import { historyAlert, type HistoryAlert } from '../lib/evidence/history-alert';
import type { BaselineChoice } from '../lib/evidence/records';
import { specHash } from '../lib/evidence/spec-hash';
import { chooseBaseline } from './baseline-choice';
import { publishReport } from '../lib/evidence/report';
import { EvidenceStore } from '../lib/evidence/store';
import type { FinishInput, FinishOutput } from './contract';
import { heartbeat } from './context';
import { defaultDeps } from './default-deps';
import type { ActivityDeps } from './deps';

export function finishActivities(deps: ActivityDeps) {
  return { finishCampaign: (input: FinishInput) => finishCampaignWith(deps, input) };
}

/** Bound to the real targets, for in-process callers (`rig step`, tests). */
export const { finishCampaign } = finishActivities(defaultDeps);

async function finishCampaignWith(deps: ActivityDeps, input: FinishInput): Promise<FinishOutput> {
  const store = EvidenceStore.forCampaign(input.campaignId);
  // A rig with nodes whose evidence is still in its bucket (end: keep, or a teardown that kept the
  // bucket): gathered before the page, so the page sees every repeat. Teardown gathered already
  // otherwise, and a second gathering finds every file in place.
  const nodes = deps.targetFor(input.result.target).nodes;
  if (nodes && input.result.rig !== 'destroyed' && input.result.rig !== 'not-provisioned') {
    try {
      store.appendLog('info', `before the report: ${await nodes.gatherEvidence(input.campaignId, (line) => heartbeat(line))}`);
    } catch (err) {
      store.appendLog('warning', `before the report: the nodes' evidence could not be gathered (${(err as Error).message}); the page shows what this host has`);
    }
  }
  const result = { ...input.result, resultsDir: store.dir };
  input.result.steps.forEach((s, i) => {
    if (!store.exists(stepFile(i + 1, s.step))) store.writeJson(stepFile(i + 1, s.step), { ...s, index: i + 1 });
  });
  store.writeJson(RESULT_FILE, result);
  store.appendLog('info', `campaign ${input.campaignId} finished: ${result.status}`);
  // The baseline is chosen once, into the evidence (a retried step keeps the first choice).
  if (!store.exists(BASELINE_FILE)) {
    const ownSpec = JSON.parse(fs.readFileSync(store.path(SPEC_FILE), 'utf8')) as { calibrate?: boolean };
    const calibrates = ownSpec.calibrate !== false;
    // A baseline is on this host's disk (beside this folder) and ran the same spec.
    const here = { resultsDir: path.dirname(store.dir), specHash: specHash(ownSpec) };
    const choice = await chooseBaseline(input.baseline, calibrates ? 'held' : 'uncalibrated', here).catch(
      (err: Error): BaselineChoice => ({ how: 'schedule', baseline_id: null, why: `the schedule's earlier runs could not be searched (${err.message.split('\n')[0]})` }),
    );
    if (choice) {
      store.writeJson(BASELINE_FILE, choice);
      store.appendLog('info', `baseline: ${choice.baseline_id ?? 'none'} (${choice.why})`);
    }
  }
  // The spec's history on this hardware (issues 36, 45): this run's first-run step or a change point new
  // with it that moved a figure the wrong way beyond its floor, each change once. Judged once, into the
  // evidence (a retry reads it back; later runs never change it, and read it to alert each change once).
  let alert: HistoryAlert | null = null;
  if (store.exists(HISTORY_ALERT_FILE)) {
    alert = JSON.parse(fs.readFileSync(store.path(HISTORY_ALERT_FILE), 'utf8')) as HistoryAlert;
  } else {
    try {
      alert = historyAlert(store.dir);
    } catch (err) {
      store.appendLog('warning', `history: not read (${(err as Error).message})`);
    }
    if (alert) {
      store.writeJson(HISTORY_ALERT_FILE, alert);
      store.appendLog('info', alert.summary);
    }
  }
  const published = await publishReport(store.dir, { seal: true });
  const b = published.model.baseline;
  const regressed = b || alert ? Boolean(b?.regression) || Boolean(alert?.regressed) : undefined;
  return { resultsDir: store.dir, reportPath: published.htmlPath, ...(regressed !== undefined ? { regressed } : {}), ...(b ? { baselineId: b.baseline_id } : {}) };
}
