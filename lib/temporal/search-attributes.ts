// Which of the rig's search attributes a namespace lacks, and the commands that register them.
// Takes the services of an existing connection (client or activity context), so it imports no
// Temporal code itself.
//
// Two ways to know, in this order:
// 1. The OperatorService's ListSearchAttributes: a self-hosted cluster answers it. Temporal Cloud
//    does not ("This Service API is NOT compatible with Temporal Cloud", the SDK's connection.ts), and
//    a self-hosted cluster with an authorizer may refuse it too.
// 2. When that is refused (PERMISSION_DENIED, UNAUTHENTICATED or UNIMPLEMENTED: errors that say
//    nothing about the attributes), one visibility count per attribute, `Name = '...'`, a call
//    any reader of the namespace may make. The server resolves each column of a query against the
//    namespace's search attributes and refuses an unknown one as INVALID_ARGUMENT, "invalid query:
//    ... column name 'X' is not a valid search attribute" (SQL visibility, the dev server's and
//    Cloud's: common/persistence/visibility/store/query/converter.go) or "invalid search attribute:
//    X" (Elasticsearch's query_interceptors.go, and resolve.go). Only that answer means missing; a
//    count that answers means present; anything else is "cannot tell" and is thrown, never read as
//    missing.

export const RIG_SEARCH_ATTRIBUTE_NAMES = ['RigCampaign', 'RigTarget', 'RigStep', 'RigStatus', 'RigRegressed'] as const;

interface OperatorService {
  listSearchAttributes(req: { namespace: string }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
}
interface WorkflowService {
  countWorkflowExecutions(req: { namespace: string; query: string }): Promise<unknown>;
}

/** The services of a connection (Connection or NativeConnection; both have these). */
export interface AttributeServices {
  operatorService: OperatorService;
  workflowService: WorkflowService;
}

/** gRPC status codes (grpc.status), listed here so this file imports nothing. */
const GRPC = { INVALID_ARGUMENT: 3, PERMISSION_DENIED: 7, UNIMPLEMENTED: 12, UNAUTHENTICATED: 16 } as const;
const OPERATOR_REFUSED: readonly number[] = [GRPC.PERMISSION_DENIED, GRPC.UNIMPLEMENTED, GRPC.UNAUTHENTICATED];

const codeOf = (err: unknown): number | undefined => {
  const c = (err as { code?: unknown } | undefined)?.code;
  return typeof c === 'number' ? c : undefined;
};

export interface SearchAttributeCheck {
  missing: string[];
  /** How it was found out: the operator's list, or one count query per attribute. */
  via: 'operator' | 'query';
  /** Why the operator's list was not used (its refusal), when via is 'query'. */
  operatorRefusal?: string;
}

/** The names missing on the namespace, and how that was found. Throws when the cluster cannot say. */
export async function checkSearchAttributes(services: AttributeServices, namespace: string): Promise<SearchAttributeCheck> {
  let listed: { customAttributes?: Record<string, unknown> | null };
  try {
    listed = await services.operatorService.listSearchAttributes({ namespace });
  } catch (err) {
    if (!OPERATOR_REFUSED.includes(codeOf(err) ?? -1)) throw err;
    const missing: string[] = [];
    for (const name of RIG_SEARCH_ATTRIBUTE_NAMES) {
      if (!(await attributeExists(services.workflowService, namespace, name))) missing.push(name);
    }
    return { missing, via: 'query', operatorRefusal: (err as Error).message };
  }
  const have = new Set(Object.keys(listed.customAttributes ?? {}));
  return { missing: RIG_SEARCH_ATTRIBUTE_NAMES.filter((n) => !have.has(n)), via: 'operator' };
}

/** Names missing on the namespace. Throws when the cluster cannot say (the caller decides what that means). */
export async function missingSearchAttributes(services: AttributeServices, namespace: string): Promise<string[]> {
  return (await checkSearchAttributes(services, namespace)).missing;
}

/** Whether the server's query converter knows `name` on this namespace (see the file's comment). */
export async function attributeExists(workflowService: WorkflowService, namespace: string, name: string): Promise<boolean> {
  try {
    await workflowService.countWorkflowExecutions({ namespace, query: `${name} = 'rig-search-attribute-probe'` });
    return true;
  } catch (err) {
    if (isUnknownAttributeRefusal(err, name)) return false;
    throw err;
  }
}

/** The server's refusal of a query naming an attribute the namespace does not have (and only that). */
export function isUnknownAttributeRefusal(err: unknown, name: string): boolean {
  if (codeOf(err) !== GRPC.INVALID_ARGUMENT) return false;
  const msg = (err as Error).message ?? '';
  return (
    msg.includes(`column name '${name}' is not a valid search attribute`) ||
    new RegExp(`invalid search attribute: ${name}\\b`).test(msg)
  );
}

export function searchAttributeCommands(missing: readonly string[], namespace: string, address?: string): string[] {
  return missing.map(
    (n) => `temporal operator search-attribute create --namespace ${namespace}${address ? ` --address ${address}` : ''} --name ${n} --type Keyword`,
  );
}

