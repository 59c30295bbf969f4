// The page as Markdown (report.md, `rig report --format md`). Sections follow the spec's results
// page: result, at a glance, method, conditions, runs, not published, what this does not show. Pure.
import { repeatsTable, tenantsTable } from './tenants';
import { sentEventsTable } from './sent-events';
import type { ReportModel } from './model-types';
import { ceilingLine, ceilingStatusText, ceilingTable, cloudTable, cloudTitle, conditionsTable, dbMarked, floorText, glanceTable, kneeText, kneeWaitsTable, LADDER_NOTE, ladderTable, ownWorkTable, readsTable, runsTable, stepsTable, stopsTable, type Table } from './tables';
import { laddersShown } from './ladder';
import { baselineFiguresTable, baselineTable } from './baseline';
import { baselineChoiceText } from './baseline-choice';
import { historyTable, historyText } from './history-chart';
import { comparisonMethod } from '../../protocol/compare';
import { variantChangesTable, variantsTable, variantsText } from './variants';
import { tailCountsText, tailsTable } from './tails';
import { warmupTable } from './warmups';
import { loadNodesTable } from './load-nodes';
import { memoryText, recoveryText, windowsTable, workloadTable } from './workload';

function cell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function mdTable(t: Table): string {
  const lines = [`| ${t.header.map(cell).join(' | ')} |`, `|${t.header.map(() => '---').join('|')}|`];
  for (const r of t.rows) lines.push(`| ${r.cells.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

const bullets = (xs: string[]) => xs.map((x) => `- ${x}`).join('\n');

export function renderMarkdown(m: ReportModel): string {
  const out: string[] = [];
  const days = m.dates.days.length ? m.dates.days.join(', ') : 'undated';
  out.push(`# ${m.campaign.banner ? `${m.campaign.banner.split(' (')[0]}: ` : ''}${m.campaign.name}: sustained throughput`);
  if (m.campaign.banner) out.push(`**${m.campaign.banner}.**`);
  if (m.campaign.deployment) out.push(`*${m.campaign.deployment}.*`);
  out.push(
    `Campaign \`${m.campaign.id}\`, run on ${days}. Every figure on this page is re-derived from the retained evidence (${m.evidence.files} files, ${m.evidence.bytes} bytes, manifest sha256 \`${m.evidence.manifest_sha256}\`), not from a console.`,
  );

  out.push('## Result');
  out.push(bullets(m.headline));

  out.push('## At a glance');
  out.push(
    'Rate rows are open loop. A single latency is the median over passing repeats, the range in brackets is their min–max; failed, unpublished and interrupted repeats are in neither. The full tables are under Runs.',
  );
  out.push(mdTable(glanceTable(m)));
  const floor = floorText(m);
  if (floor) out.push(`Instrument floor on this host (calibration): ${floor}.`);
  const notPub = m.configurations.filter((c) => !c.published);
  if (notPub.length) out.push(bullets(notPub.map((c) => `**${c.name} not published**: ${c.why_not.join('; ')}`)));
  for (const { variant, ladder } of laddersShown(m)) {
    out.push(`### The ladder${variant === null ? '' : ` of ${variant}`}: where it stops holding`);
    out.push(kneeText(ladder));
    out.push(mdTable(ladderTable(ladder)));
    out.push(`${LADDER_NOTE} The HTML page charts these rungs (offered vs delivered, p50 and p99).`);
    const waits = kneeWaitsTable(ladder);
    if (waits) {
      out.push(`#### ${dbMarked(m, 'The database around the knee')}`);
      out.push(mdTable(waits));
    }
  }
  const ceil = ceilingTable(m);
  if (ceil) {
    out.push(`### ${dbMarked(m, "Closed-loop ceiling and the database's own floor")}`);
    out.push(mdTable(ceil));
  }
  const reads = readsTable(m);
  out.push('### Reads under load');
  out.push(reads ? mdTable(reads) : 'No read probe ran (or no repeat passed with one).');
  out.push(`### ${dbMarked(m, 'What stops it')}`);
  out.push(mdTable(stopsTable(m)));
  const own = ownWorkTable(m);
  if (own) out.push(mdTable(own));

  if (m.variants) {
    out.push('## Variants: each treatment beside the control');
    out.push(variantsText(m.variants));
    const t = variantsTable(m.variants);
    out.push(t ? mdTable(t) : 'No configuration has repeats of both sides to compare.');
    out.push(comparisonMethod());
    const changes = variantChangesTable(m.variants);
    if (changes) {
      out.push('### Changes of variant (read back from the database and the service)');
      out.push(mdTable(changes));
    }
  }

  const chosen = baselineChoiceText(m);
  if (m.baseline || chosen) out.push('## Compared with the baseline');
  if (chosen) out.push(chosen);
  if (m.baseline) {
    out.push(m.baseline.summary);
    out.push(mdTable(baselineTable(m.baseline)));
    const figures = baselineFiguresTable(m.baseline);
    if (figures) out.push(mdTable(figures));
    out.push(m.baseline.method);
  }
  if (m.history) {
    out.push("## History: this spec's runs on this hardware");
    out.push(historyText(m.history) + ' (the charts are on report.html)');
    const t = historyTable(m.history);
    if (t && t.rows.length) out.push(mdTable(t));
  }

  out.push('## Method');
  out.push(bullets(m.method));

  out.push('## Conditions');
  out.push(mdTable(conditionsTable(m)));

  out.push('## Runs');
  if (m.warmups.length) {
    out.push('### Warm-up, not measured');
    out.push(mdTable(warmupTable(m.warmups)));
  }
  if (m.load_nodes?.length) {
    out.push('### Load nodes: a row per node beside the merged row');
    out.push(mdTable(loadNodesTable(m.load_nodes)));
  }
  for (const c of m.configurations) {
    out.push(`### ${c.name}: ${c.events_per_second} ev/s at batch ${c.batch}${c.p99_limit_ms !== null ? `, p99 limit ${c.p99_limit_ms} ms` : ''}: passed ${c.summary.label}`);
    out.push(mdTable(runsTable(c)));
    // Several clients (issue 35): each tenant's p99, and the repeats against the unique events.
    const tenants = tenantsTable(c);
    if (tenants) {
      out.push(`#### ${c.name}: p99 per tenant`);
      out.push(mdTable(tenants));
    }
    const dups = repeatsTable(c);
    if (dups) {
      out.push(`#### ${c.name}: repeated keys, counted once`);
      out.push(mdTable(dups));
    }
    // Batch sizes and client timestamps (issue 35): what the requests carried, as sent.
    const sent = sentEventsTable(c);
    if (sent) {
      out.push(`#### ${c.name}: batch sizes and client timestamps, as sent`);
      out.push(mdTable(sent));
    }
    // Each repeat's cloud figures (aws only), beside the DB sampler's in the runs table above.
    for (const r of c.repeats) {
      const cloud = cloudTable(r);
      if (!cloud) continue;
      out.push(`#### ${r.id}: ${cloudTitle(r)}`);
      out.push(mdTable(cloud));
    }
    // A shaped repeat's phases and recovery (issue 35; only repeats with a workload).
    for (const r of c.repeats) {
      const t = r.workload ? workloadTable(r.workload) : null;
      if (!r.workload) continue;
      out.push(`#### ${r.id}: ${r.workload.arrivals}`);
      if (r.workload.recovery) out.push(`Recovery: ${recoveryText(r.workload.recovery)}.`);
      if (t) out.push(mdTable(t));
      const wt = windowsTable(r.workload);
      if (wt) out.push(`Windows of ${r.workload.windows![0].to_s - r.workload.windows![0].from_s} s, each held to its p99 limit (drift is over the whole run):`, mdTable(wt));
      if (r.workload.memory) out.push(`${memoryText(r.workload.memory)}.`);
      out.push('The HTML page charts its offered and delivered rates and p99 per second, the phases marked.');
    }
    // Each repeat's freeze-seconds and windows beside the markers and the disk (only repeats that have any).
    for (const r of c.repeats) {
      if (!r.tails) continue;
      out.push(`#### ${r.id}: tails attributed`);
      out.push(tailCountsText(r.tails));
      out.push(mdTable(tailsTable(r.tails)));
    }
  }
  if (m.ceiling) {
    out.push('### Closed-loop ceiling');
    const c = m.ceiling;
    const lines = [`${c.workers} workers, batch ${c.batch}, ${c.seconds} s: ${ceilingStatusText(c)}.`];
    if (c.report) lines.push(ceilingLine(c.report));
    if (c.why.length) lines.push(`Why: ${c.why.join('; ')}.`);
    if (c.notes.length) lines.push(`Noted: ${c.notes.join('; ')}.`);
    out.push(lines.join(' '));
  }

  out.push('## Not published');
  out.push(m.unpublished.length ? bullets(m.unpublished.map((u) => `${u.what}: ${u.why.join('; ')}`)) : 'Everything that ran was reconciled and is published above.');

  out.push('## What this does not show');
  out.push(bullets(m.not_shown));

  out.push('## Steps');
  out.push(m.steps.length ? mdTable(stepsTable(m)) : 'No step records in the evidence.');
  if (m.warnings.length) {
    out.push('## Warnings');
    out.push(bullets(m.warnings));
  }
  return out.join('\n\n') + '\n';
}
