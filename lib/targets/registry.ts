// Which Target a spec's `target` names. The one place that knows every target's folder: the worker
// passes `targetFor` to createActivities (activities/factory.ts), so no activity imports a target.
import { TARGET_NAMES, type TargetName } from '../protocol/spec';
import { localTarget } from './local';
import type { Target } from './target';

const TARGETS: Partial<Record<TargetName, Target>> = {
  local: localTarget,
};

export function targetFor(name: TargetName): Target {
  const target = TARGETS[name];
  if (!target) {
    if ((TARGET_NAMES as readonly string[]).includes(name)) throw new Error(`the ${name} target is not built yet (issue 11 part 2)`);
    throw new Error(`unknown target '${String(name)}': the rig has ${TARGET_NAMES.join(', ')}`);
  }
  return target;
}
