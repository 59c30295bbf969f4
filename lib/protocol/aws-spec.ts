// The spec's `aws` block: where and on what an AWS rig runs (issue 11 part 2). Its own file because
// RDS's rules are not the protocol's: a gp3 volume's IOPS and throughput depend on its size, a zone
// belongs to one region, an instance class names an engine family. Every rule here fails with the
// field and the fix, before anything is provisioned. Pure (zod only): the workflow parses it too.
//
// gp3 on RDS (Amazon RDS User Guide, "Amazon RDS DB instance storage", General Purpose SSD gp3;
// DescribeValidDBInstanceModifications' ValidStorageOptions, StorageThroughputToIopsRatio "0-0.25"):
// 20-65,536 GiB; below 400 GiB the volume has a fixed baseline of 3,000 IOPS and 125 MiB/s that
// cannot be changed; from 400 GiB the baseline is 12,000 IOPS and 500 MiB/s, provisionable up to
// 64,000 IOPS and 4,000 MiB/s, at most 0.25 MiB/s of throughput per provisioned IOPS (RDS refuses
// 4,000 MiB/s at 12,000 IOPS only after everything before the instance is made: refused here first).
//
// Version-dependent settings (PostgreSQL's release notes): autovacuum_vacuum_insert_scale_factor
// exists from 13; wal_compression takes pglz, lz4 and zstd from 15 (a boolean on 14 and earlier).
// The spec's `database` is checked against the engine's major here (awsDatabaseProblems), before
// anything is made; the lifecycle of the major (standard or Extended Support) depends on the date and
// is the preflight's (lib/protocol/rds-lifecycle.ts).
import { z } from 'zod';

export const GP3_SMALL_VOLUME_GB = 400;
export const GP3_SMALL_BASELINE = { iops: 3000, throughputMiBps: 125 } as const;
export const GP3_LARGE_RANGE = { iops: [12_000, 64_000], throughputMiBps: [500, 4000] } as const;
/** gp3's most MiB/s of throughput per provisioned IOPS (RDS's StorageThroughputToIopsRatio 0-0.25). */
export const GP3_MAX_THROUGHPUT_PER_IOPS = 0.25;

const int = (what: string) =>
  z
    .number({ error: (iss) => (iss.input === undefined ? `${what} is required` : `${what} must be a number`) })
    .int(`${what} must be a whole number`)
    .positive(`${what} must be > 0`);
const price = (what: string) => z.number({ error: `${what} must be a number (USD)` }).min(0, `${what} must be >= 0 (USD)`);

const REGION = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;
const EC2_TYPE = /^[a-z][a-z0-9-]*\.[a-z0-9]+$/;

export const AwsDatabaseSpec = z.strictObject({
  /** The RDS instance class, e.g. db.m7g.2xlarge (the protocol's). */
  instanceClass: z
    .string({ error: 'instanceClass is required, e.g. "db.m7g.2xlarge"' })
    .regex(/^db\.[a-z][a-z0-9-]*\.[a-z0-9]+$/, 'instanceClass must be an RDS class such as "db.m7g.2xlarge" (it starts with "db.")'),
  /**
   * RDS PostgreSQL engine version: a major alone ("16": RDS's default minor of it, resolved by the
   * preflight) or a major.minor RDS still offers ("16.9"). The preflight resolves it with
   * DescribeDBEngineVersions and takes the parameter group family from RDS's answer.
   */
  engineVersion: z
    .string({ error: 'engineVersion is required, e.g. "16" or "16.9"' })
    .regex(/^(1[2-9]|[2-9]\d)(\.\d+)?$/, 'engineVersion must be a PostgreSQL major of 12 or later ("16": its default minor) or a major.minor such as "16.9"'),
  /** How long the campaign waits for RDS to make the instance available (its own activity, heartbeating): 10-240 minutes. */
  /**
   * Opt in to RDS Extended Support (paid per vCPU-hour) for a major past its end of standard support:
   * without it such a major is refused by the preflight, and the instance is created with
   * EngineLifecycleSupport open-source-rds-extended-support-disabled.
   */
  extendedSupport: z.boolean({ error: 'extendedSupport must be true or false' }).default(false),
  availableWaitMinutes: int('availableWaitMinutes').min(10, 'availableWaitMinutes must be >= 10 (RDS takes 10-20 minutes to create an instance)').max(240, 'availableWaitMinutes must be <= 240').default(60),
  storage: z.strictObject({
    type: z.literal('gp3', { error: 'storage.type must be "gp3" (the protocol\'s volume; io1/io2 are not built)' }).default('gp3'),
    sizeGb: int('sizeGb').min(20, 'sizeGb must be >= 20 (RDS gp3 minimum)').max(65_536, 'sizeGb must be <= 65536 (RDS gp3 maximum)'),
    iops: int('iops'),
    throughputMiBps: int('throughputMiBps'),
  }),
});

export const AwsNodeSpec = z.strictObject({
  /** The EC2 instance type, e.g. c7g.2xlarge. */
  instanceType: z
    .string({ error: 'instanceType is required, e.g. "c7g.2xlarge"' })
    .regex(EC2_TYPE, 'instanceType must be an EC2 type such as "c7g.2xlarge" (no "db." prefix: that is an RDS class)'),
});

/** $/hour and $/month figures that replace the price table's (lib/targets/aws/prices.ts) for this campaign. */
export const AwsPricesSpec = z.strictObject({
  /** Source and date of the figures given here, printed beside the total. */
  source: z.string().min(1).optional(),
  databasePerHour: price('databasePerHour').optional(),
  appNodePerHour: price('appNodePerHour').optional(),
  loadNodePerHour: price('loadNodePerHour').optional(),
  storagePerGbMonth: price('storagePerGbMonth').optional(),
  iopsPerMonth: price('iopsPerMonth').optional(),
  throughputPerMiBpsMonth: price('throughputPerMiBpsMonth').optional(),
  /** RDS Extended Support, USD per vCPU-hour (aws.database.extendedSupport on a past-support major). */
  extendedSupportPerVcpuHour: price('extendedSupportPerVcpuHour').optional(),
});

export const AwsSpec = z
  .strictObject({
    /** One region, e.g. ap-south-1 (where the protocol ran). */
    region: z.string({ error: 'region is required, e.g. "us-east-1"' }).regex(REGION, 'region must be an AWS region name such as "us-east-1"'),
    /** One availability zone of that region: the database, the app node and the load node all go there. */
    zone: z.string({ error: 'zone is required, e.g. "us-east-1a"' }).regex(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, 'zone must be an availability zone such as "us-east-1a"'),
    database: AwsDatabaseSpec,
    app: AwsNodeSpec,
    load: AwsNodeSpec,
    prices: AwsPricesSpec.optional(),
  })
  .superRefine((aws, ctx) => {
    if (REGION.test(aws.region) && !new RegExp(`^${aws.region}[a-z]$`).test(aws.zone)) {
      ctx.addIssue({
        code: 'custom',
        path: ['zone'],
        message: `zone ${aws.zone} is not in region ${aws.region}: give a zone of ${aws.region} (e.g. ${aws.region}a), since the database, the app and the load node share one zone`,
      });
    }
    const s = aws.database.storage;
    if (s.sizeGb < GP3_SMALL_VOLUME_GB) {
      for (const [field, fixed] of [['iops', GP3_SMALL_BASELINE.iops], ['throughputMiBps', GP3_SMALL_BASELINE.throughputMiBps]] as const) {
        if (s[field] !== fixed) {
          ctx.addIssue({
            code: 'custom',
            path: ['database', 'storage', field],
            message: `${field} must be ${fixed}: RDS gp3 below ${GP3_SMALL_VOLUME_GB} GB has a fixed ${GP3_SMALL_BASELINE.iops} IOPS and ${GP3_SMALL_BASELINE.throughputMiBps} MiB/s (set ${field} to ${fixed}, or sizeGb to ${GP3_SMALL_VOLUME_GB} or more to provision it)`,
          });
        }
      }
    } else {
      let inRange = true;
      for (const field of ['iops', 'throughputMiBps'] as const) {
        const [lo, hi] = GP3_LARGE_RANGE[field];
        if (s[field] < lo || s[field] > hi) {
          inRange = false;
          ctx.addIssue({
            code: 'custom',
            path: ['database', 'storage', field],
            message: `${field} must be ${lo}-${hi} for RDS gp3 of ${GP3_SMALL_VOLUME_GB} GB or more (${s.sizeGb} GB given)`,
          });
        }
      }
      if (inRange && s.throughputMiBps > s.iops * GP3_MAX_THROUGHPUT_PER_IOPS) {
        const needIops = Math.ceil(s.throughputMiBps / GP3_MAX_THROUGHPUT_PER_IOPS);
        const fix = needIops <= GP3_LARGE_RANGE.iops[1] ? `raise iops to at least ${needIops}, or lower throughputMiBps to at most ${Math.floor(s.iops * GP3_MAX_THROUGHPUT_PER_IOPS)}` : `lower throughputMiBps to at most ${Math.floor(s.iops * GP3_MAX_THROUGHPUT_PER_IOPS)}`;
        ctx.addIssue({
          code: 'custom',
          path: ['database', 'storage', 'throughputMiBps'],
          message: `throughputMiBps ${s.throughputMiBps} at ${s.iops} IOPS is ${(s.throughputMiBps / s.iops).toFixed(3)} MiB/s per IOPS: RDS gp3 allows at most ${GP3_MAX_THROUGHPUT_PER_IOPS} (${fix})`,
        });
      }
    }
  });

/** The engine's major ("16.9" or "16" -> 16). */
export function engineMajor(engineVersion: string): number {
  return Number(engineVersion.split('.')[0]);
}

/**
 * Settings of the campaign's `database` block the engine's major does not take, each with its field
 * and fix (the spec's cross-field rule for target aws; pure).
 */
export function awsDatabaseProblems(engineVersion: string, db: { wal_compression?: string; autovacuum_vacuum_insert_scale_factor?: number }): Array<{ path: string[]; message: string }> {
  const major = engineMajor(engineVersion);
  const out: Array<{ path: string[]; message: string }> = [];
  if (major <= 14 && db.wal_compression !== undefined && !['on', 'off'].includes(db.wal_compression)) {
    out.push({
      path: ['database', 'wal_compression'],
      message: `wal_compression "${db.wal_compression}" needs PostgreSQL 15 or later; on ${major} it is a boolean: set it to "on" (pglz) or "off", or aws.database.engineVersion to 15 or later`,
    });
  }
  if (major <= 12 && db.autovacuum_vacuum_insert_scale_factor !== undefined) {
    out.push({
      path: ['database', 'autovacuum_vacuum_insert_scale_factor'],
      message: `autovacuum_vacuum_insert_scale_factor does not exist on PostgreSQL ${major} (it came with 13): remove it, or set aws.database.engineVersion to 13 or later`,
    });
  }
  return out;
}

export type AwsSpec = z.infer<typeof AwsSpec>;
export type AwsPricesSpec = z.infer<typeof AwsPricesSpec>;
