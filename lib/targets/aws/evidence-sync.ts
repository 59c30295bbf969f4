// Evidence written on an AWS rig's nodes reaches the control host's results folder through the
// campaign's artifacts bucket, so that the report sees every repeat:
// - shipEvidence runs on a node (load or app) at the end of every data-plane step, the repeat's
//   included, BEFORE the step reports done: every file of the campaign's folder that changed since the
//   last ship goes to s3://<bucket>/evidence/<campaign>/<node>/<path>. A node that dies after a step
//   has lost nothing that step measured.
// - gatherEvidence runs on the control host before teardown deletes the bucket (and before the report,
//   for a kept rig): every shipped file comes into the control host's folder. A file the control host
//   does not have is written; one it has with the same bytes is skipped; one it has with other bytes
//   is kept as the node's copy under nodes/<node>/<path> (never overwritten either way).
//   campaign.log, the one file both sides append to, is merged line by line: the node's lines that the
//   control host's log lacks are appended (each keeps its own time), and the node's whole log is kept
//   under nodes/<node>/campaign.log.
// Under the emulator, with the nodes' workers on this machine sharing its results folder, both ends
// run and find every file already in place.
import fs from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { writeAtomic } from '../../evidence/atomic';
import { campaignDir, LOG_FILE } from '../../evidence/layout';
import { listEvidenceFiles } from '../../evidence/manifest';
import { stateDir } from '../../tools/paths';
import { hostName } from '../../tools/host-name';
import type { ProgressFn } from '../target';
import type { AwsClients } from './clients';
import { readAwsRecord } from './record';

/** The bucket key prefix of a campaign's shipped evidence. */
export function evidencePrefix(campaignId: string): string {
  return `evidence/${campaignId}/`;
}

/** What load node i ships its evidence as (RIG_AWS_NODE): the rig's own load node (0) is `load`, each one beyond it `load-n<i>`. */
export function loadNodeShipName(node: number): string {
  return node === 0 ? 'load' : `load-n${node}`;
}

/** Which node this is: RIG_AWS_NODE (the node's user data sets load, load-n<i> or app), else this host's name. */
export function nodeName(env: NodeJS.ProcessEnv = process.env): string {
  return env.RIG_AWS_NODE || `host-${hostName()}`;
}

/** The campaign's artifacts bucket: RIG_AWS_ARTIFACTS_BUCKET (the node's user data sets it), else the control host's record. */
export function artifactsBucket(campaignId: string, env: NodeJS.ProcessEnv = process.env): string {
  const bucket = env.RIG_AWS_ARTIFACTS_BUCKET || readAwsRecord(campaignId)?.bootstrap?.bucket;
  if (!bucket) throw new Error(`no artifacts bucket for ${campaignId}: set RIG_AWS_ARTIFACTS_BUCKET (the node's user data does) or provision from this host`);
  return bucket;
}

const shippedFile = (campaignId: string) => path.join(stateDir(), 'aws-nodes', campaignId, 'shipped.json');

/** Uploads what changed since the last ship; returns how many files went. */
export async function shipEvidence(c: Pick<AwsClients, 's3'>, campaignId: string, opts: { bucket?: string; node?: string; onProgress?: ProgressFn } = {}): Promise<number> {
  const dir = campaignDir(campaignId);
  const bucket = opts.bucket ?? artifactsBucket(campaignId);
  const node = opts.node ?? nodeName();
  const ledgerFile = shippedFile(campaignId);
  const shipped: Record<string, string> = fs.existsSync(ledgerFile) ? (JSON.parse(fs.readFileSync(ledgerFile, 'utf8')) as Record<string, string>) : {};
  let sent = 0;
  // The manifest and the page are rebuilt on the control host; writers' temporary files are half files.
  for (const rel of fs.existsSync(dir) ? listEvidenceFiles(dir) : []) {
    const st = fs.statSync(path.join(dir, ...rel.split('/')));
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (shipped[rel] === stamp) continue;
    await c.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${evidencePrefix(campaignId)}${node}/${rel}`, Body: fs.readFileSync(path.join(dir, ...rel.split('/'))) }));
    shipped[rel] = stamp;
    sent++;
    // Written after each file: a ship cut short resumes where it stopped.
    fs.mkdirSync(path.dirname(ledgerFile), { recursive: true });
    fs.writeFileSync(ledgerFile, JSON.stringify(shipped));
  }
  if (sent) opts.onProgress?.(`shipped ${sent} evidence file(s) of ${campaignId} from node ${node} to s3://${bucket}/${evidencePrefix(campaignId)}${node}/`);
  return sent;
}

export interface GatherResult {
  written: string[];
  same: number;
  /** Files the control host had with other bytes: kept as the node's copy under nodes/<node>/. */
  keptAside: string[];
  logLinesAdded: number;
}

export function summarizeGather(r: GatherResult): string {
  return `the nodes' evidence: ${r.written.length} file(s) brought here, ${r.same} already here, ${r.logLinesAdded} log line(s) added${r.keptAside.length ? `, ${r.keptAside.length} kept aside under nodes/ (other bytes than here)` : ''}`;
}

/** The node's log lines the local log lacks, in the node's order. Pure. */
export function missingLogLines(local: string, remote: string): string[] {
  const have = new Set(local.split('\n'));
  return remote.split('\n').filter((l) => l !== '' && !have.has(l));
}

/** Brings every shipped file of the campaign into this host's results folder (rules in the header). */
export async function gatherEvidence(c: Pick<AwsClients, 's3'>, campaignId: string, opts: { bucket?: string; onProgress?: ProgressFn } = {}): Promise<GatherResult> {
  const dir = campaignDir(campaignId);
  const bucket = opts.bucket ?? artifactsBucket(campaignId);
  const prefix = evidencePrefix(campaignId);
  const res: GatherResult = { written: [], same: 0, keptAside: [], logLinesAdded: 0 };
  const write = (rel: string, bytes: Uint8Array) => writeAtomic(path.join(dir, ...rel.split('/')), bytes);
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await c.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      const [node, ...parts] = (o.Key ?? '').slice(prefix.length).split('/');
      const rel = parts.join('/');
      if (!node || !rel || rel.split('/').some((p) => p === '..' || p === '.' || p === '')) continue;
      const body = await (await c.s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }))).Body!.transformToByteArray();
      const local = path.join(dir, ...rel.split('/'));
      if (rel === LOG_FILE) {
        write(`nodes/${node}/${LOG_FILE}`, body);
        const add = missingLogLines(fs.existsSync(local) ? fs.readFileSync(local, 'utf8') : '', Buffer.from(body).toString('utf8'));
        // Appended, never rewritten: the control host may be appending at the same moment.
        if (add.length) fs.appendFileSync(local, add.map((l) => `${l}\n`).join(''));
        res.logLinesAdded += add.length;
      } else if (!fs.existsSync(local)) {
        write(rel, body);
        res.written.push(rel);
      } else if (Buffer.compare(fs.readFileSync(local), Buffer.from(body)) === 0) {
        res.same++;
      } else {
        write(`nodes/${node}/${rel}`, body);
        res.keptAside.push(`nodes/${node}/${rel}`);
      }
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  opts.onProgress?.(
    `gathered the nodes' evidence of ${campaignId} from s3://${bucket}/${prefix}: ${res.written.length} file(s) new, ${res.same} already here, ${res.logLinesAdded} log line(s) added${res.keptAside.length ? `, ${res.keptAside.length} kept aside (other bytes than here): ${res.keptAside.join(', ')}` : ''}`,
  );
  return res;
}
