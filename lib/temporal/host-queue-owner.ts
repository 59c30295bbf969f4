// One machine per host queue. `rig-host-<h>` and `rig-data-<h>` belong to one machine: its disk, its
// processes, its rig. A cloned image (one state/host-id), a shared state volume, or one RIG_HOST given
// to two machines puts two machines on them, and each then takes the other's steps (a teardown that
// finds nothing, a repeat's load started on the wrong box). The worker lock (worker-lock.ts) sees only
// this machine; the server's poller list sees every machine, so a starting worker asks it.
//
// DescribeTaskQueue (default mode) lists every identity that polled the queue, its versioned queues
// included, with the time of its last poll (the server's pollerHistory: matching.PollerHistoryTTL,
// 5 minutes by default, after which an identity drops out; a live worker's entry is refreshed at the
// start and the end of every long poll, matching.longPollExpirationInterval, 1 minute by default).
// So an identity of another machine in that list is either live or died within the last 5 minutes.
// To tell which, a starting worker waits for it to poll again: a live one refreshes its entry within a
// long poll; one whose time stays put is gone (a crashed machine, this machine's previous boot).
// (temporal service/matching/poller_history.go, task_queue_partition_manager.go: the entry is put at
// the start and the end of a poll, and a put renews its time.)
import type { temporal } from '@temporalio/proto';
import { isOtherMachine, type PollerMachine } from './worker-identity';

type Service = Pick<temporal.api.workflowservice.v1.WorkflowService, 'describeTaskQueue'>;

/** temporal.api.enums.v1.TaskQueueType: the host and data queues carry activities alone. */
const ACTIVITY = 2;

export interface ForeignPoller {
  queue: string;
  identity: string;
  lastAccessTime: Date;
}

async function pollersOf(service: Service, namespace: string, queue: string): Promise<Array<{ identity: string; at: Date }>> {
  const res = await service.describeTaskQueue({ namespace, taskQueue: { name: queue }, taskQueueType: ACTIVITY });
  return (res.pollers ?? []).map((p) => {
    const t = p.lastAccessTime;
    const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
    return { identity: p.identity ?? '', at: new Date(ms) };
  });
}

async function foreign(service: Service, namespace: string, queues: string[], me: PollerMachine): Promise<ForeignPoller[]> {
  const out: ForeignPoller[] = [];
  for (const queue of queues) {
    for (const p of await pollersOf(service, namespace, queue)) {
      if (isOtherMachine(p.identity, me)) out.push({ queue, identity: p.identity, lastAccessTime: p.at });
    }
  }
  return out;
}

export interface OwnerCheck {
  service: Service;
  namespace: string;
  /** This worker's host and data queues. */
  queues: string[];
  me: PollerMachine;
  /**
   * How long to watch an identity for a new poll before calling it gone: the server's long poll
   * (1 minute) plus slack.
   */
  livePollMs?: number;
  /** Between two looks at the poller list while one is watched. */
  everyMs?: number;
  log?: (line: string) => void;
}

/**
 * The pollers of other machines that still poll this host's queues: empty when none does. Each one in
 * the list is watched for up to `livePollMs` (this machine's clock, from the first look): live once
 * its last-poll time moves (returned at once), gone if it has not moved by then (left out, and said).
 * Only the server's own times are compared with each other, so a clock that differs from the
 * server's misjudges nothing; the price is that a gone identity costs a wait of `livePollMs`.
 */
export async function otherMachinesPolling(c: OwnerCheck): Promise<ForeignPoller[]> {
  const livePollMs = c.livePollMs ?? 75_000;
  const everyMs = c.everyMs ?? 1_000;
  const until = Date.now() + livePollMs;
  let watched = await foreign(c.service, c.namespace, c.queues, c.me);
  if (watched.length) c.log?.(`${watched.map((w) => `${w.identity} (${w.queue}, last poll ${w.lastAccessTime.toISOString()})`).join('; ')}: another machine; watching up to ${livePollMs / 1000} s for a new poll`);
  const live: ForeignPoller[] = [];
  while (watched.length && live.length === 0) {
    await new Promise((r) => setTimeout(r, everyMs));
    const now = await foreign(c.service, c.namespace, c.queues, c.me);
    for (const w of watched) {
      const again = now.find((p) => p.queue === w.queue && p.identity === w.identity);
      if (again && again.lastAccessTime > w.lastAccessTime) live.push(again);
    }
    if (Date.now() >= until && live.length === 0) {
      for (const w of watched) c.log?.(`${w.identity} has not polled ${w.queue} since ${w.lastAccessTime.toISOString()}: gone`);
      watched = [];
    }
  }
  return live;
}

/** The refusal a worker prints, naming both machines and the fix. */
export function otherMachineRefusal(host: string, myIdentity: string, others: ForeignPoller[]): string {
  const who = [...new Set(others.map((o) => o.identity))];
  const queues = [...new Set(others.map((o) => o.queue))];
  return (
    `another machine polls host ${host}'s queues (${queues.join(', ')}): ${who.join('; ')}, and this one is ${myIdentity}. ` +
    'A host queue belongs to one machine (its steps act on that disk): two machines share one when they share RIG_HOST, ' +
    'or the state folder that holds host-id (a cloned image, a shared volume). Give this machine its own RIG_HOST, ' +
    'or its own RIG_STATE_DIR (a fresh one takes the machine\'s name), then start again; or stop the worker on the other machine'
  );
}
