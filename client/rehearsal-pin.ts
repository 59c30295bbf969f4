// `rig rehearse` measures on this machine: its in-process workers (or the rig worker already here)
// serve this host's queues, and the local preflight looked at this machine. So its campaign is
// pinned here (the spec's `host`: the first step is taken from rig-host-<this host>), and no other
// host's worker of the same build on a shared cluster can claim it and start PostgreSQL there.
import type { CampaignSpec } from '../lib/protocol/spec';
import { SpecInputError } from './spec-input';

export function pinnedToThisMachine<S extends Pick<CampaignSpec, 'host'>>(spec: S, host: string): S & { host: string } {
  if (spec.host !== undefined && spec.host !== host) {
    throw new SpecInputError(
      `host: the spec pins the campaign to host ${spec.host}, and rig rehearse runs it on this machine (host ${host}); ` +
        'remove "host" from the spec, or start it on that host with `rig campaign start` (its worker measures it there)',
    );
  }
  return { ...spec, host };
}
