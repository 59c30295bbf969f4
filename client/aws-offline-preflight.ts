// The dry run of an AWS campaign refuses what the preflight would refuse without asking AWS (exit 2,
// naming the field and the fix): a major past RDS's standard support without the opt-in, and a CA
// bundle without the region's root (lib/targets/aws/rds-ca-coverage.ts). A started campaign meets the
// same checks in its preflight, on the worker that provisions (whose RIG_RDS_CA_BUNDLE is the one the
// nodes' package gets), before anything is made.
import type { CampaignSpec } from '../lib/protocol/spec';
import { checkLifecycle } from '../lib/targets/aws/preflight';
import { checkCaCoverage } from '../lib/targets/aws/rds-ca-coverage';
import { SpecInputError } from './spec-input';

export function assertAwsOfflineChecks(spec: CampaignSpec, now: Date = new Date(), env: NodeJS.ProcessEnv = process.env): void {
  if (spec.target !== 'aws' || !spec.aws) return;
  const failed = [checkLifecycle(spec.aws, now), checkCaCoverage(spec.aws.region, env, now)].filter((v) => !v.ok);
  if (failed.length) throw new SpecInputError(`AWS campaign ${spec.name} refused before anything is made:\n${failed.map((v) => `  - ${v.check}: ${v.line}; fix: ${v.fix}`).join('\n')}`);
}
