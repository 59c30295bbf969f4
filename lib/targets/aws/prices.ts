// The price table an AWS rig's $/hour is computed from, kept in the repository so that every figure
// the rig prints can name where its price came from (the protocol: "every figure names its hardware,
// configuration and cost"). The AWS Price List API is not used: it is one more network dependency
// for a dry run that must need none, and the emulator has no Pricing backend to test it against.
//
// SOURCE: AWS public on-demand price pages, region us-east-1 (N. Virginia), Linux, Single-AZ:
//   - Amazon RDS for PostgreSQL pricing, https://aws.amazon.com/rds/postgresql/pricing/
//     (instance $/hour; "General Purpose SSD (gp3)" storage $/GB-month, IOPS and throughput above the
//     included baseline)
//   - Amazon EC2 On-Demand pricing, https://aws.amazon.com/ec2/pricing/on-demand/
// DATE: written 2026-12-01 from the figures as last read on those pages; this machine had no access
// to them (npm and PyPI only), so every figure is TO BE CHECKED against the pages before a published
// report quotes it. A campaign can replace any of them with `aws.prices` in its spec (with a
// `source`), which is also the way to price another region: the table holds us-east-1 only, and a
// rig elsewhere without overrides has no $/hour rather than a wrong one.
//
// Also from those pages and two more (same date, same caveat), for what the rig pays beside its
// instances and storage (campaign-cost.ts):
//   - Amazon VPC pricing, https://aws.amazon.com/vpc/pricing/ ("Public IPv4 address": every public
//     IPv4 address, in use or not, per hour, since 2024-02-01): each node has one;
//   - Amazon EBS pricing, https://aws.amazon.com/ebs/pricing/ (gp3 $/GB-month): the nodes' root volumes;
//   - Amazon CloudWatch pricing, https://aws.amazon.com/cloudwatch/pricing/ (Logs, standard ingestion
//     $/GB): Enhanced Monitoring writes each sample to CloudWatch Logs (RDSOSMetrics);
//   - RDS for PostgreSQL pricing again: instance hours are billed per second with a 10-minute minimum.
// Not priced: data transfer (free within one zone), CloudWatch Logs storage of the samples (cents at
// this volume), Performance Insights beyond its free retention, the control host.

export const PRICE_TABLE_SOURCE =
  'AWS on-demand price pages (RDS for PostgreSQL, EC2), us-east-1, Single-AZ, as of 2026-12-01, to be checked';
export const PRICE_TABLE_REGION = 'us-east-1';
/** AWS bills a month of storage as 730 hours. */
export const HOURS_PER_MONTH = 730;

/** RDS for PostgreSQL, Single-AZ, on-demand, USD per instance-hour. */
export const RDS_POSTGRES_PER_HOUR: Readonly<Record<string, number>> = {
  'db.m7g.large': 0.168,
  'db.m7g.xlarge': 0.336,
  'db.m7g.2xlarge': 0.672,
  'db.m7g.4xlarge': 1.344,
  'db.m7g.8xlarge': 2.688,
  'db.m6g.large': 0.159,
  'db.m6g.xlarge': 0.318,
  'db.m6g.2xlarge': 0.636,
  'db.m6g.4xlarge': 1.272,
};

/** EC2 Linux, on-demand, USD per instance-hour. */
export const EC2_PER_HOUR: Readonly<Record<string, number>> = {
  'c7g.large': 0.0725,
  'c7g.xlarge': 0.145,
  'c7g.2xlarge': 0.29,
  'c7g.4xlarge': 0.58,
  'm7g.large': 0.0816,
  'm7g.xlarge': 0.1632,
  'm7g.2xlarge': 0.3264,
  'm7g.4xlarge': 0.6528,
};

/** RDS gp3, Single-AZ: storage per GB-month, and IOPS / throughput above the baseline a volume includes. */
export const RDS_GP3 = {
  perGbMonth: 0.115,
  perIopsMonth: 0.02,
  perMiBpsMonth: 0.08,
} as const;

/** A public IPv4 address, USD per hour (Amazon VPC pricing). */
export const PUBLIC_IPV4_PER_HOUR = 0.005;
/** EBS gp3 for EC2 volumes, USD per GB-month (Amazon EBS pricing). */
export const EC2_GP3_PER_GB_MONTH = 0.08;
/** CloudWatch Logs standard ingestion, USD per GB (Amazon CloudWatch pricing). */
export const CLOUDWATCH_LOGS_INGEST_PER_GB = 0.5;
/**
 * One Enhanced Monitoring sample as CloudWatch Logs ingests it, bytes: an RDSOSMetrics JSON document
 * with its process list. An estimate (the RDS User Guide gives the document's fields, not its size):
 * check it against one rig's log stream (its events' sizes), and override with aws.prices if needed.
 */
export const ENHANCED_MONITORING_BYTES_PER_SAMPLE = 10_000;
/** RDS bills an instance per second with this minimum after it is created (RDS pricing). */
export const RDS_MINIMUM_BILLED_MINUTES = 10;
