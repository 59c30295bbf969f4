// The other tenants of a workload with several (issue 35, item 2; lib/protocol/clients.ts): tenant 1 is
// the fixtures tenant bring-up made (its key is the rig's API key); tenants 2..count are
// `rig-bench-t02`.. made here beside it by createFixtures: each its own customers (the same external
// ids as the fixtures', so one body maker serves every tenant), its own meter (the same key) and cost
// rate, and its own API key, in the fixtures' partition.
//
// Re-runnable, like createFixtures: a tenant already there is reused and only its key is minted again
// (the raw key cannot be read back from its hash). Called before each load that needs them; the keys
// go to the generator by env and are never written anywhere.
import { createFixtures } from './bringup/fixtures';
import type { Secret } from './bringup/secret';
import { FIXTURES_TENANT } from './fixtures-scope';

/** The name of tenant i (2..count): `rig-bench-t02`, sorted in tenant order up to 99 and beyond. */
export function tenantName(i: number): string {
  return `${FIXTURES_TENANT}-t${String(i).padStart(2, '0')}`;
}

/**
 * Makes (or completes) tenants 2..count and returns their fresh API keys in order. `customers` is the
 * fixtures' customer count, `livemode` their partition.
 */
export async function otherTenantKeys(ownerUrl: string, count: number, customers: number, livemode: boolean): Promise<Secret[]> {
  const keys: Secret[] = [];
  for (let i = 2; i <= count; i++) keys.push((await createFixtures(ownerUrl, { tenantName: tenantName(i), customers, livemode })).apiKey);
  return keys;
}
