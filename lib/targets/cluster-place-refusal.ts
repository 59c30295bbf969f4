// A local rig's cluster has nowhere its PostgreSQL OS user can reach (lib/targets/local/pg-data-root.ts):
// refused before anything is made, naming the folder and the fix. Retrying would not change the
// answer; activities/refusal.ts turns it into a non-retryable ClusterPlaceRefusal.
export class ClusterPlaceRefusal extends Error {
  override readonly name = 'ClusterPlaceRefusal';
}
