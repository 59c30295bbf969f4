// `rig campaign start SPEC --dry-run [--json]`: the plan of a campaign, from the spec alone. It makes
// nothing and contacts nothing (no Temporal server, no AWS endpoint, no credentials): the steps with
// their expected and allowed times (calibration included) and the total, the configurations with
// their gates, the variants and their order, the build measured, what would be made (with the names
// derived from the campaign id, where, with which database parameters, at what $/hour), and when the
// watchdog would tear it down. `dryRunPlan` is the plan as data (--json prints it); `dryRunLines`
// prints the same plan as text. With --preflight (dryRunPreflight) it also asks the AWS account,
// read-only, what provisioning would be refused.
import { MIN_SAMPLES } from '../lib/protocol/gates';
import { driftWarnings, fullPlan, sampleWarnings, totalMinutes, watchdogLine, watchdogNeed } from '../lib/protocol/plan';
import { campaignImages, serviceBuild, serviceSettingsList, variantRuns } from '../lib/protocol/service-spec';
import type { CampaignSpec, ConfigurationSpec } from '../lib/protocol/spec';
import { campaignLoadNodes } from '../lib/protocol/load-nodes';
import { workloadRequests, workloadSummary } from '../lib/protocol/workload-spec';
import { measuringOrder, measuringSeries, variantNames, variantSettings } from '../lib/protocol/variants';
import { awsCampaignCost } from '../lib/targets/aws/campaign-cost';
import { formatPerHour, rigCost } from '../lib/targets/aws/cost';
import { awsPlan, tagLine } from '../lib/targets/aws/plan';
import { awsClients } from '../lib/targets/aws/clients';
import { localDatabaseDefaults } from '../lib/targets/local/memory-defaults';
import { preflightAws } from '../lib/targets/aws/preflight';
import { PreflightRefusal } from '../lib/targets/preflight-refusal';

const round1 = (x: number) => Math.round(x * 10) / 10;

export interface DryRunPlan {
  campaignId: string;
  name: string;
  target: CampaignSpec['target'];
  /** What the dry run contacts: nothing, or the AWS account read-only (--preflight) and the images' registries. */
  contacts: string;
  /** Every step in the order it runs: typical minutes (expected) and what the plan allows (the watchdog covers those). */
  steps: Array<{ step: string; expectedMinutes: number; allowedMinutes: number }>;
  total: { expectedMinutes: number; allowedMinutes: number };
  build: { measured: string; settings: Array<[string, string]> };
  /** Sustained configurations (or a ladder's rungs) with the gates each repeat is judged by. */
  configurations: Array<{
    name: string;
    eventsPerSecond: number;
    batch: number;
    repeats: number;
    seconds: number;
    requestsPerRepeat: number;
    gates: string[];
    /** The workload's arrivals in words (issue 35); absent for the protocol's constant arrivals. */
    arrivals?: string;
    /** Its requests' drawn sizes and client timestamps in words (issue 35); absent without them. */
    requests?: string;
  }>;
  probe: { rate: number; p99BudgetMs: number } | null;
  ceiling: CampaignSpec['ceiling'] | null;
  denominator: CampaignSpec['denominator'] | null;
  variants: null | {
    order: 'blocks' | 'interleaved';
    fresh: boolean;
    names: string[];
    /** Each variant's settings, and what it changes against the campaign's own (database, service). */
    settings: Record<string, { database: CampaignSpec['database']; build: string; service: Array<[string, string]>; changes: string[] }>;
  };
  /** The measured repeats in the order they run (configuration[.variant] #k). */
  order: string[];
  /** What is made and where (target-specific lines, as the text plan prints them). */
  rig: string[];
  cost: {
    /** $/hour of the rig: the spec's hardware.costPerHour (local), AWS's prices (aws), none (existing). */
    perHour: number | null;
    lines: string[];
    /**
     * The whole campaign's cost and its worst case (the rig up until the watchdog's deadline), from
     * lib/targets/aws/campaign-cost.ts, for target aws; null for the other targets, or when a price is missing.
     */
    campaign: null | { expectedTotal: number | null; planTotal: number; worstCaseAtWatchdog: number; lines: string[] };
  };
  watchdog: null | { minutes: number; needMinutes: number; deadlineIfProvisionedNow: string; line: string };
  warnings: string[];
}

/** The gates a sustained repeat (or a rung) is judged by, in words (lib/protocol/gates.ts). */
function gatesOf(spec: CampaignSpec, p99LimitMs: number, kind: 'sustained' | 'rung', workload?: ConfigurationSpec['workload']): string[] {
  const reconciled = 'rows and quantity reconciled with the database';
  if (kind === 'rung') return ['no failed request', 'no dropped request', 'delivered rate within 0.5 % of offered', reconciled, 'drift noted, not gated'];
  const s = spec.sustained!;
  return [`p99 <= ${p99LimitMs} ms`, 'no dropped request', 'no failed request', reconciled, `>= ${MIN_SAMPLES} samples`, s.drift === 'noted' ? `drift (p99 last third / first third) noted beside each verdict, not gated (sustained.drift "noted")` : `drift (p99 last third / first third) <= ${s.driftLimit}`, 'instrument on time (schedule lag)', ...windowGate(workload, p99LimitMs)];
}

/** A soak's per-window gate (issue 35 item 4), in words; none without windowSeconds, so the plan is today's. */
function windowGate(w: ConfigurationSpec['workload'], p99LimitMs: number): string[] {
  return w?.windowSeconds ? [`p99 <= ${w.windowP99LimitMs ?? p99LimitMs} ms in every ${w.windowSeconds}-s window`] : [];
}

export function dryRunPlan(campaignId: string, spec: CampaignSpec, now = new Date(), preflight = false): DryRunPlan {
  const parts = fullPlan(spec);
  const series = measuringSeries(spec);
  const seconds = spec.sustained ? spec.sustained.repeatSeconds : (spec.ladder?.rungSeconds ?? 0);
  const configurations = (series?.configurations ?? []).map((c) => {
    // Only a configuration with a workload gains the key: without one the plan is today's to the byte.
    const w = 'workload' in c ? workloadSummary(c as ConfigurationSpec, seconds) : null;
    const r = 'workload' in c ? workloadRequests(c as ConfigurationSpec) : null;
    return {
      name: c.name,
      eventsPerSecond: c.eventsPerSecond,
      batch: c.batch,
      repeats: series!.repeats,
      seconds,
      requestsPerRepeat: w?.requests ?? Math.floor((c.eventsPerSecond / c.batch) * seconds),
      gates: gatesOf(spec, c.p99LimitMs, series!.kind, 'workload' in c ? (c as ConfigurationSpec).workload : undefined),
      ...(w ? { arrivals: w.arrivals } : {}),
      ...(r ? { requests: r } : {}),
    };
  });
  const names = variantNames(spec);
  const variants = spec.variants
    ? {
        order: spec.variants.order,
        fresh: spec.variants.fresh,
        names,
        settings: Object.fromEntries(
          names.map((n) => {
            const v = variantSettings(spec, n);
            const service = serviceSettingsList(v.service);
            const own = new Map(serviceSettingsList(spec.service));
            const changes = [
              ...Object.entries(v.database).filter(([k, x]) => spec.database[k as keyof CampaignSpec['database']] !== x).map(([k, x]) => `${k}=${String(x)}`),
              ...service.filter(([k, x]) => own.get(k) !== x).map(([k, x]) => `${k}=${x}`),
              ...(serviceBuild(v.service.run) !== serviceBuild(spec.service.run) ? [`build ${serviceBuild(v.service.run)}`] : []),
            ];
            return [n, { database: v.database, build: serviceBuild(v.service.run), service, changes }];
          }),
        ),
      }
    : null;
  const { rig, cost } = rigLines(campaignId, spec);
  const existing = spec.target === 'existing';
  const need = watchdogNeed(spec);
  return {
    campaignId,
    name: spec.name,
    target: spec.target,
    contacts: preflight ? `the AWS account, read-only (--preflight)${campaignImages(spec.service, variantRuns(spec)).length ? ', and the registries of the images the app node will run' : ''}` : 'nothing',
    steps: parts.map((p) => ({ step: p.step, expectedMinutes: p.expected, allowedMinutes: p.minutes })),
    total: { expectedMinutes: round1(parts.reduce((a, p) => a + p.expected, 0)), allowedMinutes: totalMinutes(parts) },
    build: { measured: serviceBuild(spec.service.run), settings: serviceSettingsList(spec.service) },
    configurations,
    probe: spec.sustained && spec.sustained.probe.rate > 0 ? { rate: spec.sustained.probe.rate, p99BudgetMs: spec.sustained.probe.p99BudgetMs } : null,
    ceiling: spec.ceiling ?? null,
    denominator: spec.denominator ?? null,
    variants,
    order: measuringOrder(spec).map((u) => `${u.configuration.name} #${u.k}`),
    rig,
    cost,
    watchdog: existing
      ? null
      : {
          minutes: spec.watchdogMinutes,
          needMinutes: need.minutes,
          deadlineIfProvisionedNow: new Date(now.getTime() + spec.watchdogMinutes * 60_000).toISOString(),
          line: watchdogLine(spec),
        },
    warnings: [...sampleWarnings(spec), ...driftWarnings(spec)],
  };
}

/** What the target makes, and its $/hour. */
function rigLines(campaignId: string, spec: CampaignSpec): { rig: string[]; cost: DryRunPlan['cost'] } {
  const out: string[] = [];
  if (spec.target === 'aws' && spec.aws) {
    const aws = spec.aws;
    // load.nodes (issue 37): the load node and the others of its type, each in the plan, the cost and the preflight.
    const loadNodes = campaignLoadNodes(spec);
    out.push(`target aws: region ${aws.region}, zone ${aws.zone} (the database, the app node and ${loadNodes > 1 ? `${loadNodes} load nodes` : 'the load node'})`);
    out.push(`resources, in the order provisioning makes them (teardown removes them in reverse), tagged ${tagLine(campaignId)}:`);
    for (const r of awsPlan(campaignId, { database: spec.database, aws }, loadNodes)) out.push(`  ${r.type.padEnd(19)} ${r.name.padEnd(44)} ${r.detail}`);
    const c = rigCost(aws, new Date(), loadNodes);
    const lines = [
      ...c.items.map((i) => `  ${i.what.padEnd(30)} ${formatPerHour(i.perHour)}${i.from === 'spec' ? ' (spec)' : ''}`),
      ...c.missing.map((m) => `  MISSING ${m}`),
      `  the whole rig: ${formatPerHour(c.perHour)}; database + app node (what the protocol's $/hr counts): ${formatPerHour(c.protocolPerHour)}`,
      `  prices: ${c.source}`,
    ];
    // The campaign's total and its worst case at the watchdog's deadline (lib/targets/aws/campaign-cost.ts):
    // the nodes' IPv4 addresses and root volumes, Enhanced Monitoring, RDS's minimum billing.
    const cc = awsCampaignCost({ ...spec, aws });
    const campaign =
      cc.plan.usd === undefined || cc.worstCase.usd === undefined
        ? null
        : { expectedTotal: cc.expected?.usd ?? null, planTotal: cc.plan.usd, worstCaseAtWatchdog: cc.worstCase.usd, lines: [...cc.lines, ...cc.missing.map((m) => `MISSING ${m}`)].map((l) => `  ${l}`) };
    if (!campaign) lines.push(...cc.lines.map((l) => `  ${l}`));
    return { rig: out, cost: { perHour: c.perHour ?? null, lines, campaign } };
  }
  if (spec.target === 'existing' && spec.existing) {
    // Nothing is made or removed there, and no watchdog runs: the plan is what the rig will touch.
    const from = (src: { env: string } | { file: string }) => ('env' in src ? `the worker's $${src.env}` : src.file);
    out.push(`target existing: the service at ${spec.existing.serviceUrl}, the database at the URL in ${from(spec.existing.databaseUrlFrom)}; nothing is provisioned or torn down`);
    out.push(`writes there: the fixtures (tenant rig-bench, a new API key), ${spec.seed.historyRows} history rows, the load's and pgbench's tagged rows; they stay after the campaign`);
    out.push('skipped: clean-check, watchdog, teardown');
    return { rig: out, cost: { perHour: null, lines: ['  none: the deployment is not the rig\'s'], campaign: null } };
  }
  out.push(`target local: a PostgreSQL cluster on a free loopback port and the service under test, on the host whose worker claims the campaign`);
  // What the spec leaves out takes the local defaults, scaled from the memory of the host that claims the campaign (this one shown).
  const named = Object.entries(spec.database).filter(([, v]) => v !== undefined);
  const left = Object.entries(localDatabaseDefaults()).filter(([k]) => !named.some(([n]) => n === k));
  const text = (kv: Array<[string, unknown]>) => kv.map(([k, v]) => `${k}=${String(v)}`).join(', ');
  out.push(`database parameters: ${text(named) || 'none named'}${left.length ? `; left out, the local defaults (from this host's memory): ${text(left)}` : ''}`);
  const perHour = spec.hardware.costPerHour;
  return { rig: out, cost: { perHour: perHour > 0 ? perHour : null, lines: [`  ${perHour > 0 ? `$${perHour.toFixed(4)}/hour (the spec's hardware.costPerHour)` : 'none given (hardware.costPerHour)'}`], campaign: null } };
}

export function dryRunLines(campaignId: string, spec: CampaignSpec, now = new Date(), preflight = false): string[] {
  const p = dryRunPlan(campaignId, spec, now, preflight);
  // With --preflight the account is asked (read-only, below): the header must not say otherwise.
  const out = [`DRY RUN of campaign ${campaignId} (${spec.name}): nothing is created, ${preflight ? 'the account is only read (--preflight)' : 'nothing is contacted'}`];
  out.push(`steps (minutes: expected on a 2-core host / allowed, which the watchdog covers):`);
  for (const s of p.steps) out.push(`  ${s.step.padEnd(10)} ${String(s.expectedMinutes).padStart(6)} / ${s.allowedMinutes}`);
  out.push(`  ${'total'.padEnd(10)} ${String(p.total.expectedMinutes).padStart(6)} / ${p.total.allowedMinutes}`);
  out.push(`build measured: ${p.build.measured}${p.build.settings.length ? `; settings ${p.build.settings.map(([k, v]) => `${k}=${v}`).join(', ')}` : ''}`);
  const kind = spec.sustained ? 'configurations' : 'ladder rungs';
  out.push(`${kind} (each repeat judged by its gates):`);
  for (const c of p.configurations) {
    out.push(`  ${c.name}: ${c.eventsPerSecond} ev/s, batch ${c.batch}, ${c.repeats} x ${c.seconds} s (${c.requestsPerRepeat} requests a repeat)`);
    if (c.arrivals) out.push(`    arrivals: ${c.arrivals}`);
    if (c.requests) out.push(`    requests: ${c.requests}`);
    out.push(`    gates: ${c.gates.join('; ')}`);
  }
  if (p.probe) out.push(`  probe: ${p.probe.rate} reads/s beside the load, p99 <= ${p.probe.p99BudgetMs} ms`);
  if (p.ceiling) out.push(`ceiling: ${p.ceiling.workers} closed-loop workers, batch ${p.ceiling.batch}, ${p.ceiling.seconds} s`);
  if (p.denominator) out.push(`denominator: pgbench, ${p.denominator.clients} clients, batch ${p.denominator.batch}, ${p.denominator.seconds} s a leg`);
  if (p.variants) {
    out.push(`variants (${p.variants.order}${p.variants.fresh ? ', a fresh seed before each block' : ''}): ${p.variants.names.join(', ')} (control first)`);
    for (const n of p.variants.names) {
      const v = p.variants.settings[n];
      out.push(`  ${n}: ${v.changes.length ? v.changes.join(', ') : "the campaign's own settings"}`);
    }
  }
  out.push(`order of the measured repeats: ${p.order.join(', ') || '(none)'}`);
  out.push(...p.rig);
  out.push('cost:');
  out.push(...p.cost.lines);
  if (p.cost.campaign) out.push(...p.cost.campaign.lines);
  if (p.watchdog) {
    out.push(p.watchdog.line);
    out.push(`watchdog deadline: ${p.watchdog.minutes} min after provisioning (were it provisioned now, the deadline would be ${p.watchdog.deadlineIfProvisionedNow}); the plan needs ${p.watchdog.needMinutes} min`);
  }
  out.push(...p.warnings);
  return out;
}

/**
 * `--dry-run --preflight`: the AWS preflight against the account (read-only; the one part of a dry run
 * that contacts anything; it also reads the app node's images from their registries). 0: every check
 * passed; 1: refused (each failed verdict names its fix).
 */
export async function dryRunPreflight(spec: CampaignSpec, say: (line: string) => void = (l) => console.log(l)): Promise<number> {
  if (spec.target !== 'aws' || !spec.aws) {
    say(`preflight: nothing to check for target ${spec.target} (it is the AWS account's)`);
    return 0;
  }
  const c = awsClients(spec.aws.region);
  try {
    say(`PREFLIGHT against the AWS account in ${spec.aws.region} (read-only):`);
    await preflightAws(c, spec.aws, say, { images: campaignImages(spec.service, variantRuns(spec)), loadNodes: campaignLoadNodes(spec) });
    return 0;
  } catch (err) {
    if (!(err instanceof PreflightRefusal)) throw err;
    console.error(`rig campaign start: refused by the preflight (${err.failed.join(', ')}); nothing was created`);
    return 1;
  } finally {
    c.destroy();
  }
}
