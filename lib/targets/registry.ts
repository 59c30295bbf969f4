// Which Target a spec's `target` names. The one place that knows every target's folder: the worker
// passes `targetFor` to createActivities (activities/factory.ts), so no activity imports a target.
import { TARGET_NAMES, type TargetName } from '../protocol/spec';
import { awsTarget } from './aws';
import { existingTarget } from './existing';
import { localTarget } from './local';
import type { Target } from './target';

const TARGETS: Record<TargetName, Target> = {
  local: localTarget,
  aws: awsTarget,
  existing: existingTarget,
};

export function targetFor(name: TargetName): Target {
  const target = TARGETS[name];
  if (!target) throw new Error(`unknown target '${String(name)}': the rig has ${TARGET_NAMES.join(', ')}`);
  return target;
}
