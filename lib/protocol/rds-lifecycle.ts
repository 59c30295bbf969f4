// The lifecycle of an RDS for PostgreSQL major: until its end of standard support RDS runs it at the
// instance's price; after it, only under RDS Extended Support, billed per vCPU-hour on top (RDS User
// Guide, "Amazon RDS Extended Support charges"; CreateDBInstance's EngineLifecycleSupport, whose
// default, open-source-rds-extended-support, enrols a past-support major silently). The rig sets
// EngineLifecycleSupport itself: disabled unless the spec opts in (aws.database.extendedSupport), and
// a past-support major without the opt-in is refused before anything is made. Pure; `now` is given.
//
// END_OF_STANDARD_SUPPORT: "Release calendar for Amazon RDS for PostgreSQL" (RDS for PostgreSQL
// Release Notes), as read 2026-12-05; 12 (2025-02-28) and 13 (2026-02-28) are also the dates the
// Extended Support charges page and AWS's Extended Support announcements give. A major not listed
// (newer than the table) counts as in standard support. Check the calendar when a major is added.
// Price: $0.100 per vCPU-hour in years 1-2 of Extended Support and $0.200 from year 3 (RDS for
// PostgreSQL pricing page, us-east-1, as of 2026-12; to be checked, like prices.ts), overridable
// with aws.prices.extendedSupportPerVcpuHour.

export const END_OF_STANDARD_SUPPORT: Readonly<Record<number, string>> = {
  11: '2024-02-29',
  12: '2025-02-28',
  13: '2026-02-28',
  14: '2027-02-28',
  15: '2028-02-29',
  16: '2029-02-28',
  17: '2030-02-28',
};

export const EXTENDED_SUPPORT_PER_VCPU_HOUR = { years1to2: 0.1, year3: 0.2 } as const;
export const EXTENDED_SUPPORT_PRICE_SOURCE = 'RDS for PostgreSQL pricing, Extended Support, us-east-1, as of 2026-12, to be checked';

export const LIFECYCLE_STANDARD = 'open-source-rds-extended-support-disabled';
export const LIFECYCLE_EXTENDED = 'open-source-rds-extended-support';

/** Whether `major` is past its end of standard support at `now`, and since when. */
export function pastStandardSupport(major: number, now: Date): { past: boolean; endedOn?: string; yearsPast?: number } {
  const ended = END_OF_STANDARD_SUPPORT[major];
  if (!ended) return { past: false };
  // Support ends at the end of that day (UTC); charges start the day after.
  const end = Date.parse(`${ended}T23:59:59.999Z`);
  if (now.getTime() <= end) return { past: false, endedOn: ended };
  return { past: true, endedOn: ended, yearsPast: (now.getTime() - end) / (365.25 * 86_400_000) };
}

/** The refusal of a past-support major without the opt-in (what, and the fix naming the fields); null when it may run. */
export function lifecycleProblem(engineVersion: string, extendedSupport: boolean, now: Date): { path: string; line: string; fix: string } | null {
  const major = Number(engineVersion.split('.')[0]);
  const p = pastStandardSupport(major, now);
  if (!p.past || extendedSupport) return null;
  const supported = Object.entries(END_OF_STANDARD_SUPPORT).filter(([, d]) => Date.parse(`${d}T23:59:59.999Z`) >= now.getTime()).map(([m]) => m);
  return {
    path: 'aws.database.engineVersion',
    line: `RDS for PostgreSQL ${major} is past its end of standard support (${p.endedOn}): RDS runs it only under paid Extended Support`,
    fix: `set aws.database.engineVersion to a major in standard support (${supported.join(', ')} or later), or aws.database.extendedSupport to true to pay for it (counted in the cost)`,
  };
}

/** What CreateDBInstance gets as EngineLifecycleSupport. */
export function engineLifecycleSupport(extendedSupport: boolean): string {
  return extendedSupport ? LIFECYCLE_EXTENDED : LIFECYCLE_STANDARD;
}

/**
 * vCPUs of an RDS instance class from its size (EC2's sizing, which RDS's classes follow): medium 1
 * (the burstable db.t* classes: 2 up to medium), large 2, xlarge 4, Nxlarge 4N. Undefined for a size
 * it does not know (metal, micro on a non-burstable class).
 */
export function dbClassVcpus(instanceClass: string): number | undefined {
  const [, family, size] = /^db\.([a-z0-9-]+)\.([a-z0-9]+)$/.exec(instanceClass) ?? [];
  if (!family || !size) return undefined;
  if (family.startsWith('t') && ['micro', 'small', 'medium'].includes(size)) return 2;
  if (size === 'medium') return 1;
  if (size === 'large') return 2;
  if (size === 'xlarge') return 4;
  const m = /^(\d+)xlarge$/.exec(size);
  return m ? 4 * Number(m[1]) : undefined;
}
