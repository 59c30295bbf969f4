// The report, end to end: evidence folder -> verified, re-derived model -> page. Used by `rig report`,
// by the campaign's report step (publishReport) and by `rig rehearse` (renderAtAGlanceText).
import fs from 'node:fs';
import path from 'node:path';
import { resultsDir } from '../../tools/paths';
import { writeOnce } from '../atomic';
import { buildManifest } from '../manifest';
import { compareWithBaseline } from './baseline';
import { renderHtml } from './html';
import { loadEvidence } from './load';
import { renderMarkdown } from './markdown';
import { buildReportModel } from './model';
import type { ReportModel } from './model-types';
export { compareWithBaseline, baselineTable, baselineFiguresTable, type BaselineOptions } from './baseline';
export type { BaselineComparison, BaselineRow } from './model-types';
export { compareConfigurations, comparisonTable, repeatFigures } from './comparison';
export { renderHtml } from './html';
export { loadEvidence, EvidenceFormatError, type Evidence, type AttemptEvidence } from './load';
export { renderMarkdown } from './markdown';
export { buildReportModel, deriveRepeat, REPORT_FORMAT } from './model';
export type { ReportModel, ConfigurationModel, RepeatModel, RepeatStatus, CeilingModel } from './model-types';
export { pageCharts, type Chart } from './plots';
export { glanceTable } from './tables';
export { renderAtAGlanceText } from './text';

export type ReportFormat = 'md' | 'html' | 'json';
export const REPORT_FORMATS: readonly ReportFormat[] = ['md', 'html', 'json'];

/** A folder path, or a campaign id under RIG_RESULTS (default state/results). */
export function resolveCampaignDir(arg: string): string {
  if (fs.existsSync(arg) && fs.statSync(arg).isDirectory()) return path.resolve(arg);
  const byId = path.join(resultsDir(), arg);
  if (!arg.includes('/') && fs.existsSync(byId) && fs.statSync(byId).isDirectory()) return byId;
  throw new Error(`'${arg}' is neither a folder nor a campaign id under ${resultsDir()} (set RIG_RESULTS if the evidence lives elsewhere)`);
}

/**
 * The verified, re-derived model of a campaign folder; with a baseline folder, the comparison too. A
 * baseline given here wins; otherwise the one the report step chose (baseline.json), whose folder is
 * looked for beside this one.
 */
export async function buildReport(dir: string, opts: { baselineDir?: string; tolerancePct?: number } = {}): Promise<ReportModel> {
  const ev = await loadEvidence(dir);
  const model = buildReportModel(ev);
  if (opts.baselineDir) {
    model.baseline = compareWithBaseline(model, buildReportModel(await loadEvidence(opts.baselineDir)), { tolerancePct: opts.tolerancePct });
    return model;
  }
  const choice = ev.baselineChoice;
  if (!choice) return model;
  if (!choice.baseline_id) {
    model.baseline_choice = { ...choice, compared: false };
    return model;
  }
  const other = path.join(path.dirname(path.resolve(dir)), choice.baseline_id);
  if (!fs.existsSync(other)) {
    model.baseline_choice = { ...choice, compared: false, problem: `its folder ${choice.baseline_id} is not beside this one (${path.dirname(path.resolve(dir))}): nothing compared` };
    return model;
  }
  try {
    model.baseline = compareWithBaseline(model, buildReportModel(await loadEvidence(other)), { tolerancePct: opts.tolerancePct });
    model.baseline_choice = { ...choice, compared: true };
  } catch (err) {
    model.baseline_choice = { ...choice, compared: false, problem: `its evidence could not be read: ${(err as Error).message}` };
  }
  return model;
}

export function renderJson(m: ReportModel): string {
  return JSON.stringify(m, null, 2) + '\n';
}

export function renderReport(m: ReportModel, format: ReportFormat): string {
  if (format === 'md') return renderMarkdown(m);
  if (format === 'html') return renderHtml(m);
  return renderJson(m);
}

export interface PublishedReport {
  model: ReportModel;
  markdownPath: string;
  htmlPath: string;
}

/**
 * The campaign's report step: optionally seal the folder (manifest.json, built last), then write
 * report.md and report.html beside the evidence. Written once: the same evidence gives the same bytes,
 * so a retried step is a no-op, and a report of different evidence is refused rather than replaced.
 */
export async function publishReport(dir: string, opts: { seal?: boolean } = {}): Promise<PublishedReport> {
  if (opts.seal) await buildManifest(dir);
  const model = await buildReport(dir);
  const markdownPath = path.join(dir, 'report.md');
  const htmlPath = path.join(dir, 'report.html');
  writeOnce(markdownPath, renderMarkdown(model));
  writeOnce(htmlPath, renderHtml(model));
  return { model, markdownPath, htmlPath };
}
