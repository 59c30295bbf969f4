// How large the nodes' root volumes are: sized for the evidence the plan writes before it ships.
//
// The load node keeps every repeat's sample stream (and its samplers' files) on its own disk until the
// campaign's evidence is synced to the bucket (evidence-sync.ts), so a plan of long repeats at high
// rates must not fill it halfway through a series. A volume cannot be grown from inside a running
// campaign, and RunInstances is called with the same parameters on every attempt (its ClientToken), so
// the size is a pure function of the spec (lib/protocol/evidence-size.ts), decided before anything is
// made. Pure.

/** The smallest root volume (AL2023's image is 8 GB). */
export const ROOT_VOLUME_MIN_GB = 30;
/** What the volume holds besides the evidence: the image, Node 22, the package, a service image pulled, logs. */
export const ROOT_VOLUME_BASE_GB = 12;

/** The nodes' root volume in GB for `evidenceBytes` of planned evidence: the base and twice the evidence (a retried repeat's room), at least 30. Pure. */
export function nodeRootVolumeGb(evidenceBytes: number | undefined): number {
  const evidenceGb = (evidenceBytes ?? 0) / 1024 ** 3;
  return Math.max(ROOT_VOLUME_MIN_GB, Math.ceil(ROOT_VOLUME_BASE_GB + 2 * evidenceGb));
}
