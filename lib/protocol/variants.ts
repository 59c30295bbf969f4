// Experiments on one rig (issue 13): a control and its treatments, each a set of database and service
// settings over the campaign's own. Pure: the workflow, the plan and the report all ask here which
// configurations are measured and in which order, so they cannot disagree.
//
// A configuration measured under a variant is named "<configuration>.<variant>" (its evidence folder,
// its run tags, its row on the page); the spec check refuses names that would collide.
import { withServiceOverrides } from './service-spec';
import type { CampaignSpec, ConfigurationSpec } from './spec';

export interface MeasuredConfiguration extends ConfigurationSpec {
  /** The spec's configuration it measures (its own name without a variant). */
  base: string;
  /** The variant it is measured under; absent without variants. */
  variant?: string;
}

export interface MeasuringUnit {
  configuration: MeasuredConfiguration;
  /** 1-based repeat index within its (variant's) configuration. */
  k: number;
}

export interface VariantSettings {
  database: CampaignSpec['database'];
  service: CampaignSpec['service'];
}

/** Control first, then the treatments; [] without variants. */
export function variantNames(spec: Pick<CampaignSpec, 'variants'>): string[] {
  const v = spec.variants;
  return v ? [v.control.name, ...v.treatments.map((t) => t.name)] : [];
}

/** The settings a variant runs with: the campaign's own, with the variant's fields over them. */
export function variantSettings(spec: Pick<CampaignSpec, 'variants' | 'database' | 'service'>, name: string): VariantSettings {
  const v = spec.variants;
  const found = v && [v.control, ...v.treatments].find((x) => x.name === name);
  if (!found) throw new Error(`no variant "${name}" in the spec (variants: ${variantNames(spec).join(', ') || 'none'})`);
  const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Partial<T>;
  // The service's env merges entry by entry: a variant changes the settings it names, the rest stay the campaign's.
  return { database: { ...spec.database, ...defined(found.database) }, service: withServiceOverrides(spec.service, found.service) };
}

/**
 * What the measuring phase repeats: the sustained configurations (each `repeats` times) or a ladder's
 * rungs (each `rungs` times, named `rung-<rate>`, gated on the ingest gate alone so no p99 limit).
 */
export interface MeasuringSeries {
  kind: 'sustained' | 'rung';
  configurations: ConfigurationSpec[];
  repeats: number;
}

/** A ladder rung as a configuration, named as the workflow, the evidence and the page name it. */
export function rungConfiguration(rate: number, batch: number): ConfigurationSpec {
  return { name: `rung-${rate}`, eventsPerSecond: rate, batch, p99LimitMs: Number.MAX_SAFE_INTEGER };
}

export function measuringSeries(spec: Pick<CampaignSpec, 'sustained' | 'ladder'>): MeasuringSeries | null {
  if (spec.sustained) return { kind: 'sustained', configurations: spec.sustained.configurations, repeats: spec.sustained.repeats };
  if (spec.ladder) return { kind: 'rung', configurations: spec.ladder.rates.map((r) => rungConfiguration(r, spec.ladder!.batch)), repeats: spec.ladder.rungs };
  return null;
}

type SeriesSpec = Pick<CampaignSpec, 'variants' | 'sustained' | 'ladder'>;

/** Every configuration the measuring phase measures (sustained configurations or ladder rungs), once per variant. */
export function measuredConfigurations(spec: SeriesSpec): MeasuredConfiguration[] {
  const configs = measuringSeries(spec)?.configurations ?? [];
  const names = variantNames(spec);
  if (!names.length) return configs.map((c) => ({ ...c, base: c.name }));
  return configs.flatMap((c) => names.map((v) => ({ ...c, name: `${c.name}.${v}`, base: c.name, variant: v })));
}

/**
 * The measured repeats in the order they run. Without variants: each configuration's (rung's) repeats
 * in turn. blocks: a variant's whole series (every configuration or the whole ladder, every repeat),
 * then the next variant's. interleaved: per configuration (rung) and repeat, every variant in turn
 * (A B A B ...).
 */
export function measuringOrder(spec: SeriesSpec): MeasuringUnit[] {
  const s = measuringSeries(spec);
  if (!s) return [];
  const measured = measuredConfigurations(spec);
  const ks = Array.from({ length: s.repeats }, (_, i) => i + 1);
  const names = variantNames(spec);
  if (!names.length) return measured.flatMap((c) => ks.map((k) => ({ configuration: c, k })));
  const of = (base: string, v: string) => measured.find((c) => c.base === base && c.variant === v)!;
  if (spec.variants!.order === 'blocks') return names.flatMap((v) => s.configurations.flatMap((c) => ks.map((k) => ({ configuration: of(c.name, v), k }))));
  return s.configurations.flatMap((c) => ks.flatMap((k) => names.map((v) => ({ configuration: of(c.name, v), k }))));
}

/**
 * Whether the unit at `i` of an order starts with a warm-up. Every repeat that follows a change of
 * variant does, since the change may restart the service or the database and the next repeat must not
 * measure a cold one. Otherwise, sustained: the first repeat of each measured configuration; a ladder:
 * its first rung only (the rungs below warm the ones above, as the protocol climbs).
 */
export function warmsUpBefore(order: readonly MeasuringUnit[], i: number, kind: MeasuringSeries['kind'] = 'sustained'): boolean {
  const u = order[i];
  if (!u) return false;
  if (i === 0) return true;
  if (order[i - 1].configuration.variant !== u.configuration.variant) return true;
  return kind === 'sustained' && !order.slice(0, i).some((p) => p.configuration.name === u.configuration.name);
}
