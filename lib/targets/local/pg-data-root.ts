// Where a local rig's PostgreSQL cluster lives, so that the unprivileged OS user the cluster runs as
// (as root: RIG_PG_OS_USER, postgres or rigpg; pg-binaries.ts pgOsUser) can reach it whatever the
// folders above the checkout allow. A clone made by root under a 0700 folder (mktemp -d, /root) has
// a state folder that user cannot traverse: initdb then fails with "could not open file .../pg/.pw".
//
//   RIG_PG_DATA_ROOT set      the clusters go under it (<root>/<campaign>); made 0700 for the OS user
//                             when missing; refused, naming the folder and the fix, when the user
//                             cannot reach it;
//   no OS user (not root)     <rig folder>/pg, as always: the rig's own user runs PostgreSQL;
//   the rig folder reachable  <rig folder>/pg;
//   otherwise                 /var/tmp/rig-pg-<user>/<campaign>: a folder the rig makes, 0700 and
//                             owned by the OS user, under /var/tmp (1777, every parent traversable).
//
// The place is decided at provisioning and recorded (the ledger's cluster path, rig.json), so
// teardown and every later step read it from there, never by deciding again.
import fs from 'node:fs';
import path from 'node:path';
import { ClusterPlaceRefusal } from '../cluster-place-refusal';
import type { OsUser } from './pg-binaries';

export const FALLBACK_ROOT = '/var/tmp';

export interface ClusterPlace {
  /** The cluster folder (made by PgCluster.create). */
  dir: string;
  /** The root made for it (chown'd to the OS user), when it is not under the rig folder. */
  root?: string;
  /** Why it is there, for the provisioning's progress line. */
  why: string;
}

export { ClusterPlaceRefusal };

/**
 * The first folder on the way to `target` (itself included, when it exists) that `user` cannot
 * traverse, or undefined. A cluster's processes run with the user's uid and primary gid only (Node's
 * spawn drops supplementary groups), so that is what is checked: owner bits, group bits, other bits.
 * Folders that do not exist yet stop the walk: whoever makes them makes them reachable.
 */
export function blockedAt(target: string, user: OsUser): { dir: string; mode: string; owner: number } | undefined {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let at: string = path.sep;
  for (let i = 0; i <= parts.length; i++) {
    let st: fs.Stats;
    try {
      st = fs.statSync(at);
    } catch {
      return undefined;
    }
    const bits = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if (!(st.mode & bits)) return { dir: at, mode: (st.mode & 0o777).toString(8).padStart(4, '0'), owner: st.uid };
    if (i < parts.length) at = path.join(at, parts[i]);
  }
  return undefined;
}

/**
 * Where the cluster of `campaignId` goes (see the top of this file). Pure but for stat calls: makes
 * nothing. `fallbackBase` is where the rig's own root goes (/var/tmp; a test gives a folder of its own).
 */
export function clusterPlace(campaignId: string, rigDir: string, user: OsUser | undefined, env: NodeJS.ProcessEnv = process.env, fallbackBase = FALLBACK_ROOT): ClusterPlace {
  const own = path.join(rigDir, 'pg');
  const given = env.RIG_PG_DATA_ROOT;
  if (given) {
    const root = path.resolve(given);
    if (user) {
      const blocked = blockedAt(root, user);
      if (blocked) {
        throw new ClusterPlaceRefusal(
          `RIG_PG_DATA_ROOT ${root}: PostgreSQL runs as ${user.name} (uid ${user.uid}), who cannot enter ${blocked.dir} (mode ${blocked.mode}, owner uid ${blocked.owner}): ` +
            `chmod o+x ${blocked.dir}, or set RIG_PG_DATA_ROOT to a folder ${user.name} can reach (e.g. ${FALLBACK_ROOT}/rig-pg-${user.name}), or unset it`,
        );
      }
    }
    return { dir: path.join(root, campaignId), root, why: `RIG_PG_DATA_ROOT ${root}` };
  }
  if (!user) return { dir: own, why: 'the rig folder' };
  const blocked = blockedAt(rigDir, user);
  if (!blocked) return { dir: own, why: 'the rig folder' };
  const root = path.join(fallbackBase, `rig-pg-${user.name}`);
  // Blocked above the root, or at the root itself: a root that exists and the user cannot enter is
  // not one the rig made (it makes it 0700 owned by the user), and the rig does not take over a
  // folder someone else made. Said now, before anything is made, rather than at provisioning.
  const stillBlocked = blockedAt(root, user);
  if (stillBlocked) {
    const atRoot = stillBlocked.dir === root;
    throw new ClusterPlaceRefusal(
      `PostgreSQL runs as ${user.name} (uid ${user.uid}), who can reach neither the rig folder (${blocked.dir} is mode ${blocked.mode}) nor ${root} ` +
        `(${atRoot ? `it exists, mode ${stillBlocked.mode}, owner uid ${stillBlocked.owner}, not made by the rig` : `${stillBlocked.dir} is mode ${stillBlocked.mode}`}): ` +
        `set RIG_PG_DATA_ROOT to a folder ${user.name} can reach, or chmod o+x ${blocked.dir}${atRoot ? `, or chown ${user.name} ${root} (or remove it: the rig makes it)` : ''}`,
    );
  }
  return { dir: path.join(root, campaignId), root, why: `${blocked.dir} is mode ${blocked.mode}, which ${user.name} cannot enter: the cluster goes under ${root}` };
}

/**
 * Makes the place's root (0700, owned by the OS user) when it has one and it is missing. Idempotent.
 * The rig (root) makes the cluster folder in it and PgCluster.create hands that to the OS user, who
 * needs only to enter the root: checked again once it exists.
 */
export function prepareClusterPlace(place: ClusterPlace, user: OsUser | undefined): void {
  if (!place.root) return;
  if (!fs.existsSync(place.root)) {
    fs.mkdirSync(place.root, { recursive: true, mode: 0o700 });
    if (user) fs.chownSync(place.root, user.uid, user.gid);
  }
  const blocked = user && blockedAt(place.dir, user);
  if (user && blocked) {
    throw new ClusterPlaceRefusal(`${blocked.dir}: PostgreSQL runs as ${user.name} (uid ${user.uid}), who cannot enter it (mode ${blocked.mode}, owner uid ${blocked.owner}): chown ${user.name} ${blocked.dir}, or chmod o+x ${blocked.dir}`);
  }
}
