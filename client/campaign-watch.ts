// Following a running campaign: its `progress` query once a second until the workflow closes, then
// its result. Used by `rig campaign watch`, `rig campaign start --wait` and `rig rehearse`.
// Beside the step, what its activity last said (its heartbeat: the seed's rows, the repeat's second
// and live p99; client/activity-detail.ts), read every few seconds. A terminal redraws the line; a log
// gets a line when the step changes and at least every 15 s while it runs, so a long step is never
// silent.
// Through a Temporal outage it keeps waiting (client/temporal-outage.ts): the result is asked for again
// until the server answers, and the command exits with the campaign's own verdict.
import { defaultPayloadConverter } from '@temporalio/common';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { CampaignResult } from '../lib/protocol/campaign-result';
import { progressQuery } from '../workflows/messages';
import { activityDetail, loadSecond, type DetailMemory, type PendingActivity } from './activity-detail';
import { progressLine } from './progress-view';
import { OutageReporter } from './temporal-outage';

const DETAIL_EVERY_MS = 5_000;
const LOG_AT_LEAST_EVERY_MS = 15_000;
/** Between two asks for the result while Temporal does not answer. */
const RESULT_RETRY_MS = 2_000;

/** The campaign's result once it closes; a failed campaign carries its result as the failure's details (workflows/campaign.ts). */
async function resultOnce(handle: WorkflowHandle): Promise<CampaignResult> {
  try {
    return (await handle.result()) as CampaignResult;
  } catch (err) {
    const details = err instanceof WorkflowFailedError ? (err.cause as { details?: unknown[] } | undefined)?.details : undefined;
    if (details && details[0] && typeof details[0] === 'object') return details[0] as CampaignResult;
    throw err;
  }
}

/** The result, asked for again for as long as Temporal does not answer (any other error ends the wait). */
async function resultThroughOutages(handle: WorkflowHandle, outage: OutageReporter): Promise<CampaignResult> {
  for (;;) {
    const startedAt = new Date();
    try {
      const r = await resultOnce(handle);
      outage.answered();
      return r;
    } catch (err) {
      if (!outage.failed(err, startedAt)) throw err;
    }
    await new Promise((r) => setTimeout(r, RESULT_RETRY_MS));
  }
}

/** The running activities' last heartbeats (none when the server cannot be asked right now). */
async function pendingActivities(handle: WorkflowHandle): Promise<PendingActivity[]> {
  const desc = await handle.describe();
  return (desc.raw.pendingActivities ?? []).map((a) => {
    const payload = a.heartbeatDetails?.payloads?.[0];
    let details: unknown;
    try {
      details = payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
    } catch {
      details = undefined; // a payload this client cannot decode: show the step alone
    }
    const t = a.lastHeartbeatTime;
    const atMs = t?.seconds !== undefined && t.seconds !== null ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined;
    return { type: a.activityType?.name ?? '', attempt: a.attempt ?? 1, details, atMs };
  });
}

export async function watchCampaign(client: Client, campaignId: string, out: NodeJS.WriteStream = process.stdout): Promise<CampaignResult> {
  const handle = client.workflow.getHandle(campaignId);
  const tty = Boolean(out.isTTY);
  let last = '';
  let lastKey = '';
  let lastWriteMs = 0;
  let detail: string | undefined;
  /** The running repeat's load second (its heartbeat), taken off the measuring left on the line. */
  let intoRepeat: number | undefined;
  let detailAtMs = 0;
  let lastStep = '';
  const memory: DetailMemory = {};
  let closed = false;
  const outage = new OutageReporter((line) => {
    // Its own line, whatever the progress line was doing (a terminal's is redrawn in place).
    out.write(tty && last ? `\n${line}\n` : `${line}\n`);
    lastKey = '';
  });
  const result = resultThroughOutages(handle, outage);
  void result.finally(() => (closed = true)).catch(() => {});
  while (!closed) {
    const askedAt = new Date();
    try {
      const p = await handle.query(progressQuery);
      outage.answered();
      const now = Date.now();
      const stepKey = progressLine(p);
      // A new step: its activity's detail, not the last step's.
      if (stepKey !== lastStep) [detail, intoRepeat] = [undefined, undefined];
      if (stepKey !== lastStep || now - detailAtMs >= DETAIL_EVERY_MS) {
        lastStep = stepKey;
        detailAtMs = now;
        [detail, intoRepeat] = await pendingActivities(handle).then(
          (acts) => [acts.map((a) => activityDetail(a, memory)).find((d) => d !== undefined), acts.map(loadSecond).find((x) => x !== undefined)] as const,
          () => [detail, intoRepeat] as const,
        );
      }
      const line = `${progressLine(p, now, intoRepeat)}${detail ? ` · ${detail}` : ''}`;
      // A terminal redraws every second (the elapsed time moves); a log gets a line when the step
      // changes, and the line with its detail at least every 15 s.
      const key = tty ? line : stepKey;
      if (key !== lastKey || (!tty && now - lastWriteMs >= LOG_AT_LEAST_EVERY_MS)) {
        out.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
        last = line;
        lastKey = key;
        lastWriteMs = now;
      }
    } catch (err) {
      // Temporal away: said once (and now and then); no worker to answer the query right now (a
      // restart, say): keep waiting for the result either way.
      outage.failed(err, askedAt);
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  if (tty && last) out.write('\n');
  return result;
}
