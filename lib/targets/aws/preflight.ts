// Preflight of an AWS rig: everything AWS can refuse is asked before anything is made or billed
// (PerfKitBenchmarker checks quotas and offerings beside _Create, not after it). Each check is its own
// file and returns a verdict (preflight-verdict.ts); they all run, each prints its line, and any
// failure throws one PreflightRefusal listing every failed check with its fix. Read-only: the calls
// are Describe*, GetRole and GetServiceQuota (docs/aws-iam-policy.md, PreflightReads), and, at
// provisioning only, CreateServiceLinkedRole when RDS's role is absent. Outside AWS: each image the app
// node will run is read from its registry (anonymous GETs, preflight-image.ts).
//
// Order: the offline checks (the major's lifecycle, the CA bundle's root for the region), then the engine version (the class's orderability depends on it), the zone's ID before the
// offerings (which are by zone ID). A check whose input failed says so instead of guessing.
// Run at the start of provisioning (provision.ts) and by `rig campaign start SPEC --dry-run --preflight`.
import type { AwsSpec } from '../../protocol/aws-spec';
import { PreflightRefusal } from '../preflight-refusal';
import type { AwsClients } from './clients';
import { checkDefaultVpc, checkRdsServiceLinkedRole } from './preflight-account';
import { resolveEngineVersion, type ResolvedEngine } from './preflight-engine';
import { checkInstanceTypes, zoneIdOf } from './preflight-offerings';
import { checkImagePlatform, type CampaignImage } from './preflight-image';
import { checkOrderable } from './preflight-orderable';
import type { RegistryOptions } from './image-platforms';
import { checkVcpuQuota } from './preflight-quota';
import { pass, refuse, verdictLine, type Verdict } from './preflight-verdict';
import { checkCaCoverage } from './rds-ca-coverage';
import { lifecycleProblem, pastStandardSupport } from '../../protocol/rds-lifecycle';
import { engineMajor } from '../../protocol/aws-spec';

/** The engine major's lifecycle at `now` (rds-lifecycle.ts): past standard support only with the opt-in. */
export function checkLifecycle(aws: AwsSpec, now: Date): Verdict {
  const problem = lifecycleProblem(aws.database.engineVersion, aws.database.extendedSupport, now);
  if (problem) return refuse('engine-lifecycle', problem.line, problem.fix);
  const major = engineMajor(aws.database.engineVersion);
  const life = pastStandardSupport(major, now);
  return pass('engine-lifecycle', life.past
    ? `PostgreSQL ${major} is past standard support (${life.endedOn}); the spec opts in to Extended Support (aws.database.extendedSupport), priced in the cost`
    : `PostgreSQL ${major} is in standard support${life.endedOn ? ` until ${life.endedOn}` : ''}; created with Extended Support disabled`);
}

export interface PreflightResult {
  verdicts: Verdict[];
  engine: ResolvedEngine;
  zoneId: string;
}

/**
 * Runs every check, printing each verdict through `say`; throws PreflightRefusal if any failed.
 * `makeServiceLinkedRole`: provisioning's preflight makes RDS's service-linked role when it is absent
 * (the one thing it may make; preflight-account.ts); the dry run's only reads. `images`: the images the
 * app node will run (none for the reference service), each checked for the node's platform.
 * `loadNodes`: the campaign's load nodes (load.nodes), each counted by the quota and the offerings.
 */
export async function preflightAws(
  c: AwsClients,
  aws: AwsSpec,
  say: (line: string) => void = () => {},
  opts: { makeServiceLinkedRole?: boolean; images?: readonly CampaignImage[]; registry?: RegistryOptions; now?: Date; loadNodes?: number } = {},
): Promise<PreflightResult> {
  const verdicts: Verdict[] = [];
  const record = <V extends Verdict>(v: V): V => {
    verdicts.push(v);
    say(verdictLine(v));
    return v;
  };
  // Offline first (no call): the major's lifecycle and the CA bundle's root for the region.
  record(checkLifecycle(aws, opts.now ?? new Date()));
  record(checkCaCoverage(aws.region, process.env, opts.now ?? new Date()));
  const engine = record(await resolveEngineVersion(c.rds, aws.database.engineVersion, aws.region));
  record(engine.resolved ? await checkOrderable(c.rds, aws, engine.resolved.version) : refuse('db-instance-class', 'not checked: the engine version is not resolved', 'fix engine-version first'));
  const zone = record(await zoneIdOf(c.ec2, aws));
  record(zone.zoneId ? await checkInstanceTypes(c.ec2, aws, zone.zoneId, opts.loadNodes) : refuse('instance-types', 'not checked: the zone has no ID here', 'fix zone first'));
  record(await checkVcpuQuota(c.ec2, c.serviceQuota, aws, opts.loadNodes));
  record(await checkRdsServiceLinkedRole(c.iam, { create: opts.makeServiceLinkedRole }));
  record(await checkDefaultVpc(c.ec2, aws));
  for (const img of opts.images ?? []) record(await checkImagePlatform(img, aws.app.instanceType, opts.registry));

  const failed = verdicts.filter((v) => !v.ok);
  if (failed.length || !engine.resolved || !zone.zoneId) {
    throw new PreflightRefusal(
      `AWS preflight refused the campaign before anything was made: ${failed.map((v) => `${v.check}: ${v.line}; fix: ${v.fix}`).join(' | ')}`,
      failed.map((v) => v.check),
    );
  }
  say(`preflight: all ${verdicts.length} checks passed`);
  return { verdicts, engine: engine.resolved, zoneId: zone.zoneId };
}
