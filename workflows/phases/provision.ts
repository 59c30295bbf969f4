// Hardware: the rig is made (billing starts here), and an AWS rig's RDS instance is waited for in a
// step of its own while the nodes boot.
import { retry, type Campaign } from './context';

export async function provision(cx: Campaign): Promise<void> {
  const { spec, campaignId } = cx;
  cx.provisioned = true; // from here on, teardown runs whatever happens (it is idempotent)
  const provisionActs = cx.machine({ startToCloseTimeout: '15 minutes', heartbeatTimeout: '1 minute' });
  // An AWS rig's RDS instance is waited for in an activity of its own (awaitRigDatabase: heartbeating,
  // bounded by the spec's aws.database.availableWaitMinutes) instead of inside provisioning, whose
  // 15-minute timeout RDS's creation can exceed (attempts would overlap, and three timeouts fail a
  // campaign whose database is already billing). The nodes boot meanwhile.
  const databaseApart = spec.target === 'aws';
  cx.rig = await cx.step(
    'provision',
    () => provisionActs.provisionRig({ campaignId, spec, ...(databaseApart ? { databaseApart } : {}) }),
    (r) => (databaseApart ? `${r.hardware}; made and launched, the database waited for apart` : `${r.hardware}; service ${r.serviceUrl}; database ${r.database}`),
  );
  if (databaseApart) {
    // The spec's bound is the whole step's: the activity counts it from its first scheduling and fails
    // non-retryably past it (or at a status RDS will not leave by itself). Its timeouts are a little
    // longer, so an attempt ends by its own bound before Temporal ends it; schedule-to-close caps all
    // attempts together (a retry after a dead worker, seen at the heartbeat timeout, gets what is left).
    const waitMinutes = spec.aws?.database.availableWaitMinutes ?? 60;
    const waitTimeout = `${waitMinutes + 5} minutes` as const;
    const waitActs = cx.machine({ startToCloseTimeout: waitTimeout, scheduleToCloseTimeout: waitTimeout, heartbeatTimeout: '2 minutes', retry: { ...retry, maximumAttempts: 3 } });
    cx.rig = await cx.step('database', () => waitActs.awaitRigDatabase({ campaignId, spec }), (r) => `${r.hardware}; service ${r.serviceUrl}; database ${r.database}`);
  }
}
