// Which machine a poller is. The server's poller list (DescribeTaskQueue) names each poller by the
// identity its worker gave; the SDK's default, `<pid>@<hostname>`, cannot tell a cloned image's two
// machines apart (one hostname) nor a reboot from a second machine. A `rig worker` adds this boot's
// id (/proc/sys/kernel/random/boot_id: random per boot, so two clones differ and a reboot is a new
// boot) after the SDK's form, which it keeps as its prefix (tests and operators find a worker by pid).
// Pure: the caller reads the host name and boot id.

/** What a rig worker calls itself: `<pid>@<os hostname> boot <8 hex> rig-host <host>`. */
export function rigWorkerIdentity(p: { pid: number; osHost: string; bootId?: string; host: string }): string {
  const boot = p.bootId ? ` boot ${p.bootId.replace(/-/g, '').slice(0, 8)}` : '';
  return `${p.pid}@${p.osHost}${boot} rig-host ${p.host}`;
}

export interface PollerMachine {
  osHost: string;
  /** Absent for a worker that gave the SDK's default identity (an older rig, another program). */
  boot?: string;
}

/** The machine an identity names; undefined when it is not of the `<pid>@<host>` form at all. */
export function machineOf(identity: string): PollerMachine | undefined {
  const m = /^\d+@(\S+)(?: boot ([0-9a-f]{8}))?(?:\s|$)/.exec(identity);
  if (!m) return undefined;
  return { osHost: m[1], ...(m[2] ? { boot: m[2] } : {}) };
}

/**
 * Whether a poller's identity is another machine than `me`. Same host name and, when both name a
 * boot, the same boot: this machine (a build draining beside the new one, an earlier process of
 * this boot). An identity of another form is another program, so another machine: it is named, and
 * the operator decides.
 */
export function isOtherMachine(identity: string, me: PollerMachine): boolean {
  const them = machineOf(identity);
  if (!them) return true;
  if (them.osHost !== me.osHost) return true;
  return them.boot !== undefined && me.boot !== undefined && them.boot !== me.boot;
}
