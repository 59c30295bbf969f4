// The At-a-glance table for a terminal (`rig rehearse` ends with it): fixed-width columns, the
// not-published reasons and why each failed repeat failed under it, and the ceiling beside its denominator. Pure.
import type { ReportModel } from './model-types';
import { stealNote } from '../../protocol/host-steal';
import { ceilingTable, glanceTable, type Table } from './tables';

export function textTable(t: Table): string {
  const widths = t.header.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r.cells[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(t.header), line(widths.map((w) => '-'.repeat(w))), ...t.rows.map((r) => line(r.cells))].join('\n');
}

export function renderAtAGlanceText(m: ReportModel): string {
  const out = [`${m.campaign.banner ? `${m.campaign.banner}\n` : ''}${m.campaign.name} (${m.campaign.id}): at a glance`, '', textTable(glanceTable(m))];
  // The warm-ups' first seconds, for a reader who wonders what repeat 1 would have met (never counted).
  for (const w of m.warmups) out.push(`  warm-up ${w.config} (not measured): p99 ${w.p99_ms ?? '—'} ms, ${w.failed ?? '—'} failed, ${w.freeze_seconds.length} freeze-seconds`);
  for (const c of m.configurations) if (!c.published) out.push(`  ${c.name} not published: ${c.why_not.join('; ')}`);
  // Why each failed repeat failed, with the host's CPU steal beside it when the hypervisor was busy.
  for (const c of m.configurations) {
    for (const r of c.repeats.filter((x) => x.status === 'failed')) {
      const steal = stealNote(r.host?.steal_pct);
      out.push(`  ${r.id} failed: ${[...r.reasons, ...(steal ? [steal] : [])].join('; ')}`);
    }
    // An invalid repeat (the instrument's failure) is named with why, never as a failure of the target.
    for (const r of c.repeats.filter((x) => x.status === 'invalid')) out.push(`  ${r.id} ${r.reasons[0]}`);
  }
  const ceil = ceilingTable(m);
  if (ceil) out.push('', textTable(ceil));
  if (m.baseline) out.push('', m.baseline.summary);
  return out.join('\n') + '\n';
}
