// Where each evidence file lives inside <results>/<campaign>/ (docs/architecture.md, "Evidence
// layout"). Paths here are RELATIVE to the campaign folder, always with '/' separators: they are
// what the manifest lists and what the report names, so they must not depend on the machine.
import path from 'node:path';
import { resultsDir } from '../tools/paths';

export const SPEC_FILE = 'spec.json';
/**
 * The run the folder belongs to (workflow id and run id), written first when the campaign opens it
 * and checked on every open (lib/evidence/folder-owner.ts): a later run under the same id is refused.
 */
export const RUN_FILE = 'run.json';
export const LOG_FILE = 'campaign.log';
export const CALIBRATION_FILE = 'calibration/calibration.json';
/** The database side's calibration (issue 31 item 6): every case, measured vs known (lib/protocol/db-calibration.ts DbCalibrationFile). */
export const DB_CALIBRATION_FILE = 'calibration/database.json';
/** The cluster settings the database calibration changes, as they were before its first change (written once, kept across attempts). */
export const DB_CALIBRATION_SETTINGS_FILE = 'calibration/database-settings-before.json';
export const RIG_FILE = 'rig.json';
/** What the service under test reported of itself at bring-up: its /healthz `settings` (issue 14). */
export const SERVICE_FILE = 'service.json';
export const RESULT_FILE = 'result.json';
export const MANIFEST_FILE = 'manifest.json';
export const DENOMINATOR_FILE = 'denominator/legs.json';
export const CEILING_DIR = 'ceiling';
export const REPEATS_DIR = 'repeats';
/** Unmeasured load before a configuration's first repeat: warmup/<config>/aA (never counted). */
export const WARMUP_DIR = 'warmup';
/** Beside a warm-up's stream: its judgement (lib/protocol/warmup.ts) and figures. */
export const WARMUP_FILE = 'warmup.json';

/**
 * Which campaign this one is compared with, and how it was chosen (a scheduled run's newest earlier held
 * run, or one pinned by the spec's `baseline`); written by the report step before the folder is sealed,
 * so `rig report` later makes the same comparison (activities/baseline-choice.ts).
 */
export const BASELINE_FILE = 'baseline.json';

/**
 * The spec's history read by the report step (issue 36, lib/evidence/history-alert.ts): the change points
 * among the newest runs that moved a figure the wrong way (they set RigRegressed), or that none did.
 */
export const HISTORY_ALERT_FILE = 'history-alert.json';

/**
 * Changes of the history someone accepted at this run (`rig history ack`, lib/evidence/history-acks.ts):
 * who, when, why. Written after the seal by a person, not by the campaign: never in the manifest, as
 * the page is not; read by later runs' alerts (they stop alerting the change) and by `rig history`.
 */
export const HISTORY_ACKS_FILE = 'history-acks.json';

/**
 * Each change of variant (issue 13), in order: variants/NN-<variant>.json holds the settings asked,
 * as they took effect (read back from pg_settings and the service's /healthz) and what was restarted.
 */
export const VARIANTS_DIR = 'variants';
export function variantFile(seq: number, variant: string): string {
  if (!(Number.isInteger(seq) && seq >= 1)) throw new RangeError(`variant change number is a 1-based whole number, got ${seq}`);
  return `${VARIANTS_DIR}/${String(seq).padStart(2, '0')}-${variant}.json`;
}

/** The page itself: derived from the files above, so never listed in the manifest. */
export const REPORT_FILES = ['report.md', 'report.html', 'report.json'] as const;

/** Files of one repeat attempt (also of ceiling/). */
export const SAMPLES = 'samples.csv.gz';
export const LOAD = 'load.json';
export const RECONCILE = 'reconcile.json';
export const DB_SAMPLES = 'db-samples.jsonl';
/** The WAL position and pg_stat_wal read at the load's edges (lib/evidence/wal-bracket.ts; absent before issue 31). */
export const WAL_BRACKET = 'wal-bracket.json';
export const HOST_SAMPLES = 'host-samples.jsonl';
/**
 * 1-s disk rows of the block device(s) under the database's files (lib/evidence/disk-sampler.ts), local
 * target only: on aws Enhanced Monitoring's per-second disk series (cloud-os-metrics.json) stands in.
 */
export const DISK_SAMPLES = 'disk-samples.jsonl';
/**
 * The app node's host samples (aws: the service's own host), taken all campaign long by the app node's
 * worker (activities/app-node.ts) in one file per hour, so a ship after each repeat sends only the hour
 * that grew. The page cuts each repeat's window out of them by load.json's start and end.
 */
export const APP_NODE_DIR = 'app-node';
export function appNodeHostFile(at: Date): string {
  return `${APP_NODE_DIR}/host-samples-${at.toISOString().slice(0, 13).replace(/[-:]/g, '')}.jsonl`;
}
export const APP_NODE_HOST_FILE = /^app-node\/host-samples-\d{8}T\d{2}\.jsonl$/;
export const POSTGRES_LOG = 'postgres.log';
export const VERDICT = 'verdict.json';
/** Beside an attempt that did not finish: why (written by the attempt that found it, or on cancel). */
export const INTERRUPTED = 'interrupted.json';
/**
 * Cloud evidence of a repeat on the aws target (lib/targets/aws/evidence/collect.ts), one file per
 * source, each holding its series or the collector's error: CloudWatch AWS/RDS metrics, Enhanced
 * Monitoring (RDSOSMetrics), Performance Insights db.load by wait event. Absent on the local target.
 */
export const CLOUD_RDS_METRICS = 'cloud-rds-metrics.json';
export const CLOUD_OS_METRICS = 'cloud-os-metrics.json';
export const CLOUD_DB_LOAD = 'cloud-db-load.json';
export const CLOUD_FILES = [CLOUD_RDS_METRICS, CLOUD_OS_METRICS, CLOUD_DB_LOAD] as const;
export type CloudFileName = (typeof CLOUD_FILES)[number];

/** The campaign's folder: <RIG_RESULTS or state/results>/<campaignId>. */
export function campaignDir(campaignId: string, root: string = resultsDir()): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(campaignId)) {
    throw new Error(`campaign id '${campaignId}' cannot name a folder: use letters, digits, '.', '_' and '-'`);
  }
  return path.join(root, campaignId);
}

/** steps/NN-<step>.json, NN the step's position in the campaign (01, 02, ...). */
export function stepFile(index: number, step: string): string {
  if (!Number.isInteger(index) || index < 0 || index > 99) throw new RangeError(`step index must be 0..99, got ${index}`);
  if (!/^[a-z][a-z0-9-]*$/.test(step)) throw new Error(`step name '${step}' must be lower-case letters, digits and '-'`);
  return `steps/${String(index).padStart(2, '0')}-${step}.json`;
}

/** repeats/<config>/rK-aA: repeat K (1-based), attempt A (1-based). */
export function repeatDir(config: string, repeat: number, attempt: number): string {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(config)) throw new Error(`configuration name '${config}' cannot name a folder`);
  if (!(Number.isInteger(repeat) && repeat >= 1 && Number.isInteger(attempt) && attempt >= 1)) {
    throw new RangeError(`repeat and attempt are 1-based whole numbers, got r${repeat}-a${attempt}`);
  }
  return `${REPEATS_DIR}/${config}/r${repeat}-a${attempt}`;
}

/** warmup/<config>/aA: the warm-up of a configuration (or a ladder's first rung), attempt A (1-based). */
export function warmupDir(config: string, attempt: number): string {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(config)) throw new Error(`configuration name '${config}' cannot name a folder`);
  if (!(Number.isInteger(attempt) && attempt >= 1)) throw new RangeError(`attempt is a 1-based whole number, got a${attempt}`);
  return `${WARMUP_DIR}/${config}/a${attempt}`;
}

/** Parses `warmup/<config>/aA/<file>`; null for any other path. */
export function parseWarmupPath(rel: string): { config: string; attempt: number; file: string } | null {
  const m = /^warmup\/([a-z0-9][a-z0-9._-]*)\/a(\d+)\/(.+)$/.exec(rel);
  return m ? { config: m[1], attempt: Number(m[2]), file: m[3] } : null;
}

/** Parses `repeats/<config>/rK-aA/<file>`; null for any other path. */
export function parseRepeatPath(rel: string): { config: string; repeat: number; attempt: number; file: string } | null {
  const m = /^repeats\/([a-z0-9][a-z0-9._-]*)\/r(\d+)-a(\d+)\/(.+)$/.exec(rel);
  if (!m) return null;
  return { config: m[1], repeat: Number(m[2]), attempt: Number(m[3]), file: m[4] };
}
