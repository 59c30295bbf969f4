// Variants on the page (issue 13): each treatment beside the control, configuration by configuration,
// through the same noise-aware comparison as a baseline (./comparison.ts, lib/protocol/compare.ts),
// with the database's wait profile of both sides; the order the repeats actually ran in (from their
// load.json start times, so interleaving is shown as measured, not as planned); and every change of
// variant with what took effect, read back, and what was restarted (variants/NN-<variant>.json).
import type { CampaignSpec } from '../../protocol/spec';
import { measuringSeries, variantNames } from '../../protocol/variants';
import { kneeWhere } from './ladder';
import type { ConfigurationModel, VariantLadder, VariantPair, VariantsModel } from './model-types';
import { compareConfigurations, comparisonRows, comparisonHeader, waitProfile, waitsRow } from './comparison';
import type { VariantChange } from './load';
import type { Row, Table } from './cells';

export function buildVariants(spec: CampaignSpec, configurations: ConfigurationModel[], changes: VariantChange[], ladders?: VariantLadder[]): VariantsModel | undefined {
  const v = spec.variants;
  const series = measuringSeries(spec);
  if (!v || !series) return undefined;
  const [control, ...treatments] = variantNames(spec);
  const byName = new Map(configurations.map((c) => [c.name, c]));
  const pairs: VariantPair[] = [];
  for (const c of series.configurations) {
    const ctl = byName.get(`${c.name}.${control}`);
    for (const t of treatments) {
      const tr = byName.get(`${c.name}.${t}`);
      if (!ctl || !tr) continue;
      pairs.push({ base: c.name, treatment: t, comparison: compareConfigurations(ctl, tr), waits: { control: waitProfile(ctl), treatment: waitProfile(tr) } });
    }
  }
  const variantOf = (config: string) => [control, ...treatments].find((n) => config.endsWith(`.${n}`)) ?? '?';
  const ran = configurations
    .flatMap((c) => c.repeats.filter((r) => r.started_at).map((r) => ({ at: r.started_at!, v: variantOf(c.name) })))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    .map((x) => x.v);
  // A ladder's finding is where its knee falls: each variant's, side by side (./ladder.ts).
  const knees = series.kind === 'rung' && ladders ? ladders.map((l) => ({ variant: l.variant, where: kneeWhere(l.ladder) })) : undefined;
  return { order: v.order, fresh: v.fresh, control, treatments, ran, changes: [...changes].sort((a, b) => a.seq - b.seq), pairs, ...(knees ? { knees } : {}) };
}

/** `name=value` pairs of settings as read back, without the logging the rig always sets (log_*). */
export function settingsText(settings: Record<string, string | undefined>, sep = ' '): string {
  return Object.entries(settings)
    .filter(([k]) => !k.startsWith('log_'))
    .map(([k, v]) => `${k}=${v ?? '—'}`)
    .join(sep);
}

/** One sentence: the plan and the order as run. */
export function variantsText(m: VariantsModel): string {
  const shown = m.ran.length > 24 ? `${m.ran.slice(0, 24).join(' ')} …` : m.ran.join(' ');
  const knees = m.knees ? ` The knee (first rung that did not hold): ${m.knees.map((k) => `${k.variant} ${k.where}`).join('; ')}.` : '';
  return `Control ${m.control} and ${m.treatments.join(', ')} on one rig, ${m.order}${m.fresh ? ', a fresh history seeded for each variant' : ''}. Repeats in the order they ran: ${shown || 'none'}.${knees}`;
}

/** Per configuration and treatment: the comparison's rows, then the wait profile of both sides. */
export function variantsTable(m: VariantsModel): Table | null {
  if (!m.pairs.length) return null;
  const rows: Row[] = [];
  for (const p of m.pairs) {
    rows.push(...comparisonRows(`${p.base}: ${p.treatment}`, p.comparison));
    rows.push(waitsRow(`${p.base}: ${p.treatment}`, p.waits.control, p.waits.treatment));
  }
  return { header: comparisonHeader({ control: m.control, variant: 'treatment' }), rows };
}

/** Every change of variant: what took effect and what restarted. */
export function variantChangesTable(m: VariantsModel): Table | null {
  if (!m.changes.length) return null;
  const rows: Row[] = m.changes.map((c) => {
    const db = settingsText(c.applied.database, ', ');
    const svc = settingsText(c.applied.service, ', ');
    const restarted = [c.applied.restarted.database.length ? `database (${c.applied.restarted.database.join(', ')})` : '', c.applied.restarted.service ? 'service' : ''].filter(Boolean).join(', ') || 'nothing';
    return { cells: [String(c.seq), c.variant, c.at, db, svc, restarted] };
  });
  return { header: ['#', 'variant', 'at', 'database (read back)', 'service (read back)', 'restarted'], rows };
}
