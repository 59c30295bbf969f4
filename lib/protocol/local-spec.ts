// The spec's `local` block: how the local target makes its rig. `rdsFidelity: true` makes the cluster
// behave as RDS for PostgreSQL does toward the rig (lib/targets/local/rds-fidelity.ts): TLS required
// and verified against a test CA, a non-superuser admin in place of the superuser, RDS's reserved
// settings refused. CI runs a campaign that way so that what would fail on RDS fails here first. Pure.
import { z } from 'zod';

export const LocalSpec = z.strictObject({
  rdsFidelity: z.boolean({ error: 'local.rdsFidelity must be true or false' }).default(false),
});
export type LocalSpec = z.infer<typeof LocalSpec>;

/** The block is read by the local target only: anywhere else it would be silently ignored. */
export function localProblems(s: { target: string; local?: LocalSpec }): Array<{ path: Array<string | number>; message: string }> {
  if (s.local && s.target !== 'local') {
    return [{ path: ['local'], message: `a "local" block is only read with target "local" (this spec's target is "${s.target}"): remove it, or set target to "local"` }];
  }
  return [];
}
