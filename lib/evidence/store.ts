// The results store: <results>/<campaign>/, written by activities, read by the report.
//
// Rules (docs/architecture.md, "Evidence layout"):
// - every file is written atomically (temporary file, then rename): a crash leaves the old state or
//   the new file, never half a file;
// - nothing written is rewritten: a second write with different bytes is refused
//   (EvidenceExistsError); the same bytes again are accepted, so an activity that Temporal retries
//   after it had already written its file does not fail;
// - campaign.log is the one append-only file (appendLog), manifest.json the one rebuilt file
//   (buildManifest, last).
// Paths are relative to the campaign folder, with '/' separators; the store refuses any that would
// leave it.
import fs from 'node:fs';
import path from 'node:path';
import type { RepeatSummary, StepOutcome } from '../protocol/campaign-result';
import { commitOnce, tempNameFor, writeOnce } from './atomic';
import { appendLogLine, stepEndText, stepStartText, verdictText, type LogKind } from './campaign-log';
import { campaignDir, LOG_FILE, MANIFEST_FILE } from './layout';
import { buildManifest, verifyManifest, type Manifest, type ManifestCheck } from './manifest';

export class EvidenceStore {
  /** Absolute path of the campaign folder. */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  /** The store of a campaign under RIG_RESULTS (default state/results), or under `root`. */
  static forCampaign(campaignId: string, root?: string): EvidenceStore {
    return new EvidenceStore(campaignDir(campaignId, root));
  }

  /** Absolute path of a relative evidence path; refuses absolute paths and '..'. */
  path(rel: string): string {
    if (typeof rel !== 'string' || rel === '' || path.isAbsolute(rel) || rel.includes('\\')) {
      throw new Error(`evidence path '${rel}' must be relative to the campaign folder, with '/' separators`);
    }
    const norm = path.posix.normalize(rel);
    if (norm !== rel || norm.startsWith('../') || norm === '..' || norm.startsWith('./')) {
      throw new Error(`evidence path '${rel}' must be a plain relative path inside the campaign folder (no '.', '..' or '//')`);
    }
    return path.join(this.dir, ...norm.split('/'));
  }

  exists(rel: string): boolean {
    return fs.existsSync(this.path(rel));
  }

  private guard(rel: string): string {
    if (rel === LOG_FILE) throw new Error(`${LOG_FILE} is append-only: use appendLog()`);
    if (rel === MANIFEST_FILE) throw new Error(`${MANIFEST_FILE} is built from the other files: use buildManifest()`);
    return this.path(rel);
  }

  /** Pretty JSON with a final newline (stable for the same value: key order is the writer's). */
  writeJson(rel: string, value: unknown): string {
    const text = JSON.stringify(value, null, 2);
    if (text === undefined) throw new Error(`writeJson(${rel}): the value is not JSON (undefined or a function)`);
    return this.writeText(rel, text + '\n');
  }

  /** One JSON value per line (db-samples.jsonl, host-samples.jsonl) written at once. */
  writeJsonLines(rel: string, rows: readonly unknown[]): string {
    return this.writeText(rel, rows.map((r) => JSON.stringify(r) + '\n').join(''));
  }

  writeText(rel: string, text: string): string {
    const file = this.guard(rel);
    writeOnce(file, text);
    return file;
  }

  writeBytes(rel: string, data: Uint8Array): string {
    const file = this.guard(rel);
    writeOnce(file, data);
    return file;
  }

  /**
   * For files written as a stream (the sample stream, a sampler's rows as they come): a temporary
   * path beside the final one, invisible to the manifest. Write it, close it, then commit(rel, tmp).
   */
  tempPath(rel: string): string {
    const file = this.guard(rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return tempNameFor(file);
  }

  /** Gives a finished temporary file its final name, refusing to replace different content. */
  commit(rel: string, tmp: string): string {
    const file = this.guard(rel);
    commitOnce(tmp, file);
    return file;
  }

  /** Moves an existing file (e.g. a log slice another process wrote) into the store, copying it first. */
  importFile(rel: string, source: string): string {
    const tmp = this.tempPath(rel);
    try {
      fs.copyFileSync(source, tmp, fs.constants.COPYFILE_EXCL);
      return this.commit(rel, tmp);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** Appends one line to campaign.log. `at` defaults to now (the log is the one place a wall clock belongs). */
  appendLog(kind: LogKind, text: string, at: Date | string = new Date()): void {
    appendLogLine(path.join(this.dir, LOG_FILE), { at: typeof at === 'string' ? at : at.toISOString(), kind, text });
  }

  logStepStart(step: string, at?: Date | string): void {
    this.appendLog('step-start', stepStartText(step), at);
  }

  logStepEnd(outcome: Pick<StepOutcome, 'step' | 'status' | 'summary'>, at?: Date | string): void {
    this.appendLog('step-end', stepEndText(outcome), at);
  }

  logVerdict(summary: RepeatSummary, at?: Date | string): void {
    this.appendLog('verdict', verdictText(summary), at);
  }

  logWarning(text: string, at?: Date | string): void {
    this.appendLog('warning', text, at);
  }

  /** Seals the folder: manifest.json with size and sha256 of every evidence file (call last). */
  buildManifest(): Promise<Manifest> {
    return buildManifest(this.dir);
  }

  verifyManifest(): Promise<ManifestCheck> {
    return verifyManifest(this.dir);
  }
}
