// "What this does not show", written from the campaign's own spec: the limits of THESE figures, so
// the page never claims more than the protocol measured. Pure.
import { MAX_BATCH } from '../../protocol/hardcount-api';
import type { RigFile } from '../records';
import { serviceBuild } from '../../protocol/service-spec';
import type { CampaignSpec } from '../../protocol/spec';

const n = (x: number) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const dur = (s: number) => (s % 60 === 0 ? `${s / 60} min` : `${s} s`);

export function notShown(spec: CampaignSpec, rig?: Pick<RigFile, 'costPerHour' | 'priceCovers'> | null): string[] {
  const out: string[] = [];
  out.push(
    'Steady state only. Constant, evenly spaced arrivals; no spikes, no diurnal shape, no retries or duplicate keys, server-side timestamps, uniform batches, one tenant, one meter. A steady, well-behaved client is the right first benchmark, not a "real traffic" claim.',
  );
  if (spec.sustained) {
    const s = spec.sustained;
    out.push(
      `"Sustained" means ${s.repeats} × ${dur(s.repeatSeconds)} with a ${dur(s.cooldownSeconds)} cool-down between, not ${dur(s.repeats * s.repeatSeconds)} unbroken. Effects slower than one repeat (multi-hour autovacuum debt, table growth past memory) appear only as far as the seeded history (${n(spec.seed.historyRows)} rows) and these repeats reach.`,
    );
    if (s.probe.rate > 0) {
      out.push(
        `The read probe is one budget (p99 ${n(s.probe.p99BudgetMs)} ms) over three endpoints at ${s.probe.rate} requests/s, reported per endpoint. The usage aggregate scales with events per customer (${n(spec.seed.customers)} customers here), so the budget it meets depends on how big the customers are.`,
      );
    } else {
      out.push('No read probe ran: nothing here says whether reads stay usable while ingest runs at these rates.');
    }
  }
  if (spec.ladder) {
    out.push(
      `Ladder rungs (${spec.ladder.rungs} × ${dur(spec.ladder.rungSeconds)} per rate) pass on the ingest gate alone (delivered rate, drops, reconciliation); drift is noted, not gated. A rung that held is not a sustained result.`,
    );
  }
  if (spec.ceiling) {
    out.push(
      `The closed-loop figure (${spec.ceiling.workers} workers, batch ${spec.ceiling.batch}) is a ceiling, not a service level: a closed loop slows down with the server, so it hides queueing delay.`,
    );
  }
  if (spec.target === 'local') {
    out.push(
      'A local rig: the load generator, the service under test and PostgreSQL share one machine and compete for its CPU, memory and disk. No network between them, no nginx in front, no pooler, no replica. Figures from this machine do not transfer to another shape of hardware.',
    );
  }
  out.push(
    spec.service.run
      ? `The service under test is ${serviceBuild(spec.service.run)}, with ${Object.keys(spec.service.env ?? {}).length ? `the settings ${Object.entries(spec.service.env ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')}` : 'no settings given'}: another build, or other settings of the same build, are other results.`
      : `The service under test is the reference service, configured as: last-used writes ${spec.service.lastUsed}, inserts ${spec.service.insert}, usage aggregate by ${spec.service.aggregate}${Object.keys(spec.service.env ?? {}).length ? `, with ${Object.entries(spec.service.env ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')}` : ''}. Other settings of the same service are other results.`,
  );
  const perHour = typeof rig?.costPerHour === 'number' ? rig.costPerHour : spec.hardware.costPerHour;
  out.push(
    `Cost is the hardware's hourly price (${perHour > 0 ? `$${perHour.toFixed(2)}/hour` : 'none given'}) over the time the rig existed; ${rig?.priceCovers ? `it covers ${rig.priceCovers}, not data transfer, snapshots or the control host` : 'storage and the load generator are not in it'}.`,
  );
  out.push(`Batches up to ${n(MAX_BATCH)} events are accepted by the service; only the batch sizes above were measured.`);
  return out;
}
