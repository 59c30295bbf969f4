// What the activities are given rather than import (the dependency-injection shape of Temporal's
// samples, activities-dependency-injection): the targets, by the name a spec or a rig handle carries.
// The worker passes lib/targets/registry.ts (worker/run-worker.ts); a test may pass any other.
import type { RigHandle } from '../lib/protocol/campaign-result';
import type { TargetName } from '../lib/protocol/spec';
import type { Target } from '../lib/targets/target';

export interface ActivityDeps {
  targetFor(name: TargetName): Target;
}

/** The target of the rig a data-plane activity acts on: every handle provisionRig returns names it. */
export function rigTarget({ targetFor }: ActivityDeps, rig: Pick<RigHandle, 'target'>): Target {
  return targetFor(rig.target);
}
