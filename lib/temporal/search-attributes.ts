// Which of the rig's search attributes a cluster lacks, and the commands that register them.
// Takes the operator service of an existing connection (client or activity context), so it imports
// no Temporal code itself.

export const RIG_SEARCH_ATTRIBUTE_NAMES = ['RigCampaign', 'RigTarget', 'RigStep', 'RigStatus', 'RigRegressed'] as const;

interface OperatorService {
  listSearchAttributes(req: { namespace: string }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
}

/** Names missing on the cluster. Throws when the cluster cannot say (the caller decides what that means). */
export async function missingSearchAttributes(operator: OperatorService, namespace: string): Promise<string[]> {
  const res = await operator.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(res.customAttributes ?? {}));
  return RIG_SEARCH_ATTRIBUTE_NAMES.filter((n) => !have.has(n));
}

export function searchAttributeCommands(missing: readonly string[], namespace: string, address?: string): string[] {
  return missing.map(
    (n) => `temporal operator search-attribute create --namespace ${namespace}${address ? ` --address ${address}` : ''} --name ${n} --type Keyword`,
  );
}
