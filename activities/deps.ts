// What the activities are given rather than import (the dependency-injection shape of Temporal's
// samples, activities-dependency-injection): the targets, by the name a spec or a rig handle carries.
// The worker passes lib/targets/registry.ts (worker/run-worker.ts); a test may pass any other.
import type { RigHandle } from '../lib/protocol/campaign-result';
import type { TargetName } from '../lib/protocol/spec';
import type { Target } from '../lib/targets/target';

export interface ActivityDeps {
  targetFor(name: TargetName): Target;
}

/**
 * The target of the rig a data-plane activity acts on. Every handle provisionRig returns names its
 * target; a handle made by hand without one (a test that seeds a bare cluster does) is the local rig's,
 * as every handle was before the target became a choice.
 */
export function rigTarget({ targetFor }: ActivityDeps, rig: Partial<Pick<RigHandle, 'target'>>): Target {
  return targetFor(rig.target ?? 'local');
}
