// A campaign's id is its workflow id, made safe as a folder name (evidence, rig folders, ledgers).
// Ids Temporal makes itself (a schedule appends an RFC 3339 time: "weekly-2026-11-30T03:00:00Z")
// carry characters a folder name should not, so they are mapped once, here, for every reader.
export function campaignIdOf(workflowId: string): string {
  const safe = workflowId.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return (safe || 'campaign').slice(0, 80);
}

/**
 * The campaign id as it may appear inside a cloud resource's or queue's name: lower case, letters,
 * digits and single hyphens, at most 40 characters ('' when nothing is left). Names that carry it also
 * carry a hash of the full id, which keeps two campaigns whose slugs collide apart. Pure (workflows
 * import the queue names built with it).
 */
export function campaignSlug(campaignId: string): string {
  return campaignId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}
