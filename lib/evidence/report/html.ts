// The page as one self-contained HTML file (report.html, `rig report --format html`): the same
// sections and tables as the Markdown, plus the charts, drawn by ECharts, which is inlined (no CDN,
// no network): the file opens offline and keeps working when archived.
//
// Deterministic: no timestamps, ids assigned in page order, chart options serialised as JSON.
import { repeatsTable, tenantsTable } from './tenants';
import { sentEventsTable } from './sent-events';
import fs from 'node:fs';
import path from 'node:path';
import { baselineFiguresTable, baselineTable } from './baseline';
import { baselineChoiceText } from './baseline-choice';
import { comparisonMethod } from '../../protocol/compare';
import { variantChangesTable, variantsTable, variantsText } from './variants';
import type { ConfigurationModel, ReportModel, RepeatModel } from './model-types';
import { pageCharts, type Chart } from './plots';
import { ceilingLine, ceilingStatusText, ceilingTable, cloudTable, cloudTitle, conditionsTable, dbMarked, floorText, glanceTable, kneeText, kneeWaitsTable, LADDER_NOTE, ladderTable, ownWorkTable, readsTable, runsTable, stepsTable, stopsTable, type Table } from './tables';
import { laddersShown } from './ladder';
import { tailCountsText, tailsTable } from './tails';
import { warmupTable } from './warmups';
import { loadNodesTable } from './load-nodes';
import { memoryText, recoveryText, windowsTable, workloadTable } from './workload';
import { historyTable, historyText } from './history-chart';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JSON safe inside <script>: '<' never appears raw, so no '</script>' or '<!--' can end it early. */
function scriptJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

let echartsSource: { code: string; version: string } | null = null;
/** ECharts' minified build from node_modules (read once per process). */
export function echartsBundle(): { code: string; version: string } {
  if (!echartsSource) {
    const pkgFile = require.resolve('echarts/package.json');
    const version = (JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { version: string }).version;
    const code = fs.readFileSync(path.join(path.dirname(pkgFile), 'dist', 'echarts.min.js'), 'utf8');
    // A literal "</script" inside the library would close the tag early; the minified build has none,
    // and any that appeared would be inside a string, where "<\/" means the same.
    echartsSource = { code: code.replace(/<\/(script)/gi, '<\\/$1'), version };
  }
  return echartsSource;
}

function table(t: Table, id?: string): string {
  const head = `<thead><tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>`;
  const body = t.rows.map((r) => `<tr${r.cls ? ` class="${esc(r.cls)}"` : ''}>${r.cells.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table${id ? ` id="${esc(id)}"` : ''}>${head}<tbody>\n${body}\n</tbody></table>`;
}

const ul = (xs: string[]) => `<ul>${xs.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>`;

const HISTORY_NOTE =
  'Change points: E-divisive means on ranks with a seeded permutation test (lib/protocol/change-points.ts); a step is found some runs after it, and alerts (sets RigRegressed) once, on the first run whose history shows it. `rig history` prints the same series.';

function chartDivs(charts: Chart[]): string {
  return `<div class="charts">${charts.map((c) => `<div class="chart" id="${c.id}" data-kind="${c.kind}" data-owner="${esc(c.owner)}"></div>`).join('')}</div>`;
}

function repeatBlock(r: RepeatModel, charts: Chart[] | undefined): string {
  const parts = [`<h4 id="repeat-${esc(r.id.replace(/\s+/g, '-'))}">${esc(r.id)}: <span class="${r.status}">${esc(r.status.replace(/-/g, ' '))}</span></h4>`];
  if (r.status !== 'passed' && r.reasons.length) parts.push(ul([...r.reasons, ...r.gate_reasons.map((g) => `also failed: ${g}`)]));
  if (r.workload) {
    // A shaped repeat's phases and recovery beside their limits (issue 35).
    const t = workloadTable(r.workload);
    const rec = r.workload.recovery ? `<p class="${r.workload.recovery.passed === false ? 'failed' : 'passed'}">Recovery: ${esc(recoveryText(r.workload.recovery))}.</p>` : '';
    const wt = windowsTable(r.workload);
    const wins = wt ? `<p>Windows of ${r.workload.windows![0].to_s - r.workload.windows![0].from_s} s, each held to its p99 limit (drift is over the whole run):</p>${table(wt, `windows-${r.id.replace(/\s+/g, '-')}`)}` : '';
    const mem = r.workload.memory ? `<p>${esc(memoryText(r.workload.memory))}.</p>` : '';
    parts.push(`<div class="workload"><h5>${esc(r.workload.arrivals)}</h5>${rec}${t ? table(t, `workload-${r.id.replace(/\s+/g, '-')}`) : ''}${wins}${mem}</div>`);
  }
  if (charts?.length) parts.push(chartDivs(charts));
  if (r.series && !r.db) parts.push('<p class="note">Wait events and WAL: not sampled (no db-samples.jsonl for this repeat).</p>');
  // Beside the DB sampler's figures: what the cloud itself recorded of the same window (aws only).
  const cloud = cloudTable(r);
  if (cloud) parts.push(`<div class="cloud"><h5>${esc(cloudTitle(r))}</h5>${table(cloud, `cloud-${r.id.replace(/\s+/g, '-')}`)}</div>`);
  if (r.tails) parts.push(`<div class="tails"><h5>Tails attributed</h5><p>${esc(tailCountsText(r.tails))}</p>${table(tailsTable(r.tails), `tails-${r.id.replace(/\s+/g, '-')}`)}</div>`);
  if (r.files.length) parts.push(`<p class="files">evidence: ${esc(r.dir)}/ {${esc(r.files.join(', '))}}</p>`);
  return `<div class="repeat">${parts.join('\n')}</div>`;
}

function configSection(c: ConfigurationModel, charts: Map<string, Chart[]>): string {
  const head = `<h3 id="config-${esc(c.name)}">${esc(c.name)}: ${esc(String(c.events_per_second))} ev/s at batch ${c.batch}${
    c.p99_limit_ms !== null ? `, p99 limit ${c.p99_limit_ms} ms` : ''
  }: passed ${esc(c.summary.label)}${c.published ? '' : ' <span class="not-published">(not published)</span>'}</h3>`;
  const why = c.published ? '' : `<p class="not-published">Not published: ${esc(c.why_not.join('; '))}</p>`;
  // Several clients (issue 35): each tenant's p99, and the repeats against the unique events.
  const tenants = tenantsTable(c);
  const dups = repeatsTable(c);
  // Batch sizes and client timestamps (issue 35): what the requests carried, as sent.
  const sent = sentEventsTable(c);
  const clients = [
    tenants ? `<h4>p99 per tenant</h4>${table(tenants, `tenants-${c.name}`)}` : '',
    dups ? `<h4>Repeated keys, counted once</h4>${table(dups, `repeated-${c.name}`)}` : '',
    sent ? `<h4>Batch sizes and client timestamps, as sent</h4>${table(sent, `sent-events-${c.name}`)}` : '',
  ].filter(Boolean);
  return [head, why, table(runsTable(c), `runs-${c.name}`), ...clients, ...c.repeats.map((r) => repeatBlock(r, charts.get(r.id)))].join('\n');
}

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1280px; padding: 0 16px; color: #1d1d1f; }
h1 { font-size: 24px; } h2 { margin-top: 36px; border-bottom: 1px solid #ddd; } h4 { margin: 18px 0 6px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
tr.passed td:first-child { border-left: 4px solid #2ca02c; }
tr.failed td:first-child { border-left: 4px solid #d62728; }
tr.not-published td, tr.not-run td { color: #777; }
tr.not-published td:first-child { border-left: 4px solid #999; }
tr.interrupted td { color: #8a6d00; }
tr.not-judged td:first-child { border-left: 4px solid #8a6d00; }
span.not-judged { color: #8a6d00; }
span.passed { color: #2ca02c; } span.failed { color: #d62728; } span.not-published, p.not-published { color: #777; } span.interrupted { color: #8a6d00; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.chart { height: 260px; min-width: 0; border: 1px solid #eee; }
.note, .files { color: #666; font-size: 12px; }
code { font-size: 12px; }
`;

export function renderHtml(m: ReportModel): string {
  const charts = pageCharts(m);
  const allCharts = [...charts.values()].flat();
  const echarts = echartsBundle();
  const days = m.dates.days.length ? m.dates.days.join(', ') : 'undated';
  const s: string[] = [];
  s.push('<!doctype html>');
  s.push('<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">');
  s.push(`<title>${esc(m.campaign.name)}: sustained throughput (${esc(m.campaign.id)})</title>`);
  s.push(`<meta name="rig-evidence-manifest-sha256" content="${m.evidence.manifest_sha256}">`);
  s.push(`<style>${CSS}</style></head><body>`);
  s.push(`<h1>${m.campaign.banner ? `${esc(m.campaign.banner.split(' (')[0])}: ` : ''}${esc(m.campaign.name)}: sustained throughput</h1>`);
  if (m.campaign.banner) s.push(`<p class="failed"><strong>${esc(m.campaign.banner)}.</strong></p>`);
  if (m.campaign.deployment) s.push(`<p><em>${esc(m.campaign.deployment)}.</em></p>`);
  s.push(
    `<p>Campaign <code>${esc(m.campaign.id)}</code>, run on ${esc(days)}. Every figure on this page is re-derived from the retained evidence (${m.evidence.files} files, ${m.evidence.bytes} bytes, manifest sha256 <code>${m.evidence.manifest_sha256}</code>), not from a console.</p>`,
  );
  s.push('<section id="result"><h2>Result</h2>' + ul(m.headline) + '</section>');

  s.push('<section id="at-a-glance"><h2>At a glance</h2>');
  s.push('<p>Rate rows are open loop. A single latency is the median over passing repeats, the range in brackets is their min–max; failed, unpublished and interrupted repeats are in neither.</p>');
  s.push(table(glanceTable(m), 'glance'));
  const floor = floorText(m);
  if (floor) s.push(`<p class="instrument-floor">Instrument floor on this host (calibration): ${esc(floor)}.</p>`);
  const notPub = m.configurations.filter((c) => !c.published);
  if (notPub.length) s.push(ul(notPub.map((c) => `${c.name} not published: ${c.why_not.join('; ')}`)));
  for (const { key, variant, ladder: l } of laddersShown(m)) {
    const id = variant === null ? '' : `-${variant}`;
    s.push(`<h3 id="ladder${esc(id)}">The ladder${variant === null ? '' : ` of ${esc(variant)}`}: where it stops holding</h3><p class="${l.knee ? 'failed' : 'passed'}">${esc(kneeText(l))}</p>`);
    s.push(chartDivs(charts.get(key) ?? []));
    s.push(table(ladderTable(l), 'ladder-table'));
    s.push(`<p class="note">${esc(LADDER_NOTE)}</p>`);
    const waits = kneeWaitsTable(l);
    if (waits) s.push(`<h4 id="knee-waits${esc(id)}">${esc(dbMarked(m, 'The database around the knee'))}</h4>` + table(waits, 'knee-waits-table'));
  }
  const ceil = ceilingTable(m);
  if (ceil) s.push(`<h3>${esc(dbMarked(m, "Closed-loop ceiling and the database's own floor"))}</h3>` + table(ceil, 'ceiling'));
  const reads = readsTable(m);
  s.push('<h3>Reads under load</h3>' + (reads ? table(reads, 'reads') : '<p>No read probe ran (or no repeat passed with one).</p>'));
  const own = ownWorkTable(m);
  s.push(`<h3>${esc(dbMarked(m, 'What stops it'))}</h3>` + table(stopsTable(m), 'stops') + (own ? table(own, 'own-work') : ''));
  s.push('</section>');

  if (m.variants) {
    const t = variantsTable(m.variants);
    const changes = variantChangesTable(m.variants);
    s.push(
      `<section id="variants"><h2>Variants: each treatment beside the control</h2><p>${esc(variantsText(m.variants))}</p>${t ? table(t, 'variants-table') : '<p>No configuration has repeats of both sides to compare.</p>'}<p class="note">${esc(comparisonMethod())}</p>${
        changes ? `<h3>Changes of variant (read back from the database and the service)</h3>${table(changes, 'variant-changes')}` : ''
      }</section>`,
    );
  }
  const chosen = baselineChoiceText(m);
  if (m.baseline || chosen) {
    const b = m.baseline;
    const figures = b ? baselineFiguresTable(b) : null;
    const parts = [
      chosen ? `<p>${esc(chosen)}</p>` : '',
      b ? `<p class="${b.regression ? 'failed' : 'passed'}">${esc(b.summary)}</p>${table(baselineTable(b), 'baseline-table')}${figures ? table(figures, 'baseline-figures') : ''}<p class="note">${esc(b.method)}</p>` : '',
    ];
    s.push(`<section id="baseline"><h2>Compared with the baseline</h2>${parts.join('')}</section>`);
  }
  if (m.history) {
    // Beside the pairwise comparison: the whole series, where each figure moved and which build did it.
    const t = historyTable(m.history);
    s.push(
      `<section id="history"><h2>History: this spec's runs on this hardware</h2><p class="${m.history.regressed ? 'failed' : 'passed'}">${esc(historyText(m.history))}</p>${t && t.rows.length ? table(t, 'history-changes') : ''}${chartDivs(charts.get('history') ?? [])}<p class="note">${esc(HISTORY_NOTE)}</p></section>`,
    );
  }
  s.push('<section id="method"><h2>Method</h2>' + ul(m.method) + '</section>');
  s.push('<section id="conditions"><h2>Conditions</h2>' + table(conditionsTable(m), 'conditions-table') + '</section>');

  s.push('<section id="runs"><h2>Runs</h2>');
  if (m.warmups.length) s.push('<h3 id="warm-up">Warm-up, not measured</h3>' + table(warmupTable(m.warmups), 'warmup-table'));
  if (m.load_nodes?.length) s.push('<h3 id="load-nodes">Load nodes: a row per node beside the merged row</h3>' + table(loadNodesTable(m.load_nodes), 'load-nodes-table'));
  for (const c of m.configurations) s.push(configSection(c, charts));
  if (m.ceiling) {
    const c = m.ceiling;
    s.push(`<h3 id="ceiling-run">Closed-loop ceiling: ${c.workers} workers, batch ${c.batch}, ${c.seconds} s: ${esc(ceilingStatusText(c))}</h3>`);
    if (c.report) s.push(`<p>${esc(ceilingLine(c.report))}</p>`);
    const notes = [...c.why, ...c.notes];
    if (notes.length) s.push(ul(notes));
    const last = c.attempts[c.attempts.length - 1];
    if (last) s.push(repeatBlock(last, charts.get('ceiling')));
  }
  s.push('</section>');

  s.push('<section id="not-published"><h2>Not published</h2>' + (m.unpublished.length ? ul(m.unpublished.map((u) => `${u.what}: ${u.why.join('; ')}`)) : '<p>Everything that ran was reconciled and is published above.</p>') + '</section>');
  s.push('<section id="not-shown"><h2>What this does not show</h2>' + ul(m.not_shown) + '</section>');
  s.push('<section id="steps"><h2>Steps</h2>' + (m.steps.length ? table(stepsTable(m), 'steps-table') : '<p>No step records in the evidence.</p>') + '</section>');
  if (m.warnings.length) s.push('<section id="warnings"><h2>Warnings</h2>' + ul(m.warnings) + '</section>');
  s.push(`<p class="note">Charts drawn by Apache ECharts ${esc(echarts.version)}, embedded in this file.</p>`);

  s.push(`<script>${echarts.code}</script>`);
  s.push(`<script type="application/json" id="rig-charts">${scriptJson(allCharts.map((c) => ({ id: c.id, option: c.option })))}</script>`);
  s.push(`<script>
(function () {
  var specs = JSON.parse(document.getElementById('rig-charts').textContent);
  var charts = [];
  specs.forEach(function (s) {
    var el = document.getElementById(s.id);
    if (!el) return;
    var c = echarts.init(el, null, { renderer: 'canvas' });
    c.setOption(s.option);
    charts.push(c);
  });
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.resize(); }); });
  document.body.setAttribute('data-charts', String(charts.length));
})();
</script>`);
  s.push('</body></html>');
  return s.join('\n') + '\n';
}
