// A sandbox shaped like an Amazon Linux 2023 node, for running the nodes' user data whole, as root
// (test/targets/aws/node-boot.test.ts). What it is made of, and where it differs from a real node:
//
// - Network: a network namespace of its own, joined to this machine's by a veth pair on a /30 of
//   10.200.N.0 (N picked free at start): the node is .2, this machine's end .1, and nothing else is
//   routed (no default route). relay() forwards a port of .1 to a loopback server here (the Temporal
//   dev server, moto). 169.254.169.254 sits on the namespace's loopback and answers IMDSv2 (token,
//   role credentials, identity document, instance tags) from a small server run inside it.
// - Files: each boot runs in a mount namespace (unshare -m) where /etc, /usr, /opt, /var and /root are
//   overlays of this machine's own (the writes land in the boot's folder, never on this machine), /tmp
//   is the boot's own, and /dev/console is a file: the "serial console" EC2's GetConsoleOutput returns.
//   useradd makes `rig` in the overlay's /etc/passwd only.
// - Packages: `dnf` is a script that asserts each package name against AL2023's and installs what
//   this machine has in its place (node-22 and npm-22 are this machine's node and npm; pgbench is
//   PostgreSQL 15's); one named package can be made to fail as dnf fails. npm installs from this
//   machine's npm cache (npm_config_offline): the namespace reaches no registry.
// - AWS: the aws CLI is this machine's (v1; AL2023 ships v2), pointed at moto by AWS_ENDPOINT_URL; the
//   worker's SDK by RIG_AWS_ENDPOINT. Both take the instance role's credentials from the metadata server.
// - No systemd: `systemctl` records what it is asked; startUnit() runs the unit's ExecStart as its
//   User= and Group=, in its WorkingDirectory, with its Environment= and EnvironmentFile= lines and
//   systemd's UMask (0022), in the same file system view and network namespace.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** AL2023's package names the user data may install (checked against the AL2023 package list, 2026). */
export const AL2023_PACKAGES = ['nodejs22', 'nodejs22-npm', 'tar', 'gzip', 'postgresql16', 'postgresql16-contrib', 'awscli-2', 'docker'];

const OVERLAID = ['etc', 'usr', 'opt', 'var', 'root'];
/** The stand-in for npm ci (DiskOptions.npmFrom): an earlier tree, overlaid on the node's node_modules. */
const NM_TREE = '/usr/lib/rig-sandbox/npm-tree';
const NM_LAYERS = '/usr/lib/rig-sandbox/nm';
const NM_OVERLAY = `mount -t overlay overlay -o lowerdir=${NM_TREE},upperdir=${NM_LAYERS}/up,workdir=${NM_LAYERS}/work /opt/rig/app/node_modules`;

/** Where the sandbox's own commands live, inside its /usr overlay (first on the boot's PATH). */
const SHIM_DIR = '/usr/lib/rig-sandbox/bin';
const CLOUD_INIT_PATH = `${SHIM_DIR}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin';

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

export interface NodeNet {
  ns: string;
  hostIp: string;
  nodeIp: string;
  /** Forwards hostIp:<a free port> to 127.0.0.1:port; gives the port. */
  relay(port: number): Promise<number>;
  close(): Promise<void>;
}

/** The namespace and its veth pair; close() removes both (and the relays). */
export async function nodeNetwork(): Promise<NodeNet> {
  const used = sh('ip', ['-o', 'addr']);
  let n = 100 + (process.pid % 150);
  while (used.includes(`10.200.${n}.`)) n = n >= 250 ? 100 : n + 1;
  const tag = `${process.pid % 100000}`;
  const ns = `rigboot${tag}`;
  const [vh, vn] = [`rbh${tag}`, `rbn${tag}`];
  const hostIp = `10.200.${n}.1`;
  const nodeIp = `10.200.${n}.2`;
  const inNs = (...args: string[]) => sh('ip', ['netns', 'exec', ns, ...args]);
  sh('ip', ['netns', 'add', ns]);
  try {
    sh('ip', ['link', 'add', vh, 'type', 'veth', 'peer', 'name', vn]);
    sh('ip', ['link', 'set', vn, 'netns', ns]);
    sh('ip', ['addr', 'add', `${hostIp}/30`, 'dev', vh]);
    sh('ip', ['link', 'set', vh, 'up']);
    inNs('ip', 'addr', 'add', `${nodeIp}/30`, 'dev', vn);
    inNs('ip', 'link', 'set', vn, 'up');
    inNs('ip', 'link', 'set', 'lo', 'up');
    inNs('ip', 'addr', 'add', '169.254.169.254/32', 'dev', 'lo');
  } catch (err) {
    try {
      sh('ip', ['link', 'del', vh]);
    } catch {
      // not made
    }
    sh('ip', ['netns', 'del', ns]);
    throw err;
  }
  const servers: net.Server[] = [];
  return {
    ns,
    hostIp,
    nodeIp,
    async relay(port) {
      const server = net.createServer((inbound) => {
        const outbound = net.connect(port, '127.0.0.1');
        inbound.pipe(outbound).pipe(inbound);
        const end = () => {
          inbound.destroy();
          outbound.destroy();
        };
        inbound.on('error', end);
        outbound.on('error', end);
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, hostIp, () => r()));
      return (server.address() as net.AddressInfo).port;
    },
    async close() {
      for (const s of servers) await new Promise((r) => s.close(r));
      try {
        sh('ip', ['link', 'del', vh]);
      } catch {
        // gone with the namespace
      }
      sh('ip', ['netns', 'del', ns]);
    },
  };
}

export interface ImdsContent {
  region: string;
  instanceId: string;
  role: string;
  tags: Record<string, string>;
}

/** IMDSv2 at 169.254.169.254:80 inside the namespace; every request is appended to `log`. */
export async function startImds(nn: NodeNet, dir: string, content: ImdsContent): Promise<{ log: string; stop(): Promise<void> }> {
  const script = path.join(dir, 'imds.cjs');
  const log = path.join(dir, 'imds.log');
  fs.writeFileSync(
    script,
    `'use strict';
const http = require('node:http');
const fs = require('node:fs');
const c = ${JSON.stringify(content)};
const token = 'imds-token-' + process.pid;
const identity = { region: c.region, instanceId: c.instanceId, accountId: '123456789012', availabilityZone: c.region + 'a', instanceType: 't4g.large', architecture: 'arm64', imageId: 'ami-0123456789abcdef0' };
const creds = () => JSON.stringify({ Code: 'Success', Type: 'AWS-HMAC', AccessKeyId: 'testing', SecretAccessKey: 'testing', Token: 'testing-session', LastUpdated: new Date().toISOString(), Expiration: new Date(Date.now() + 6 * 3600e3).toISOString() });
http.createServer((req, res) => {
  fs.appendFileSync(${JSON.stringify(log)}, req.method + ' ' + req.url + '\\n');
  if (req.method === 'PUT' && req.url === '/latest/api/token') {
    if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return void res.writeHead(400).end();
    return void res.end(token);
  }
  if (req.headers['x-aws-ec2-metadata-token'] !== token) return void res.writeHead(401).end();
  const p = req.url;
  const tagPrefix = '/latest/meta-data/tags/instance/';
  if (p === '/latest/meta-data/iam/security-credentials/') return void res.end(c.role);
  if (p === '/latest/meta-data/iam/security-credentials/' + c.role) return void res.end(creds());
  if (p === '/latest/dynamic/instance-identity/document') return void res.end(JSON.stringify(identity));
  if (p === '/latest/meta-data/instance-id') return void res.end(c.instanceId);
  if (p === '/latest/meta-data/placement/region') return void res.end(c.region);
  if (p === '/latest/meta-data/tags/instance') return void res.end(Object.keys(c.tags).join('\\n'));
  if (p.startsWith(tagPrefix) && decodeURIComponent(p.slice(tagPrefix.length)) in c.tags) return void res.end(c.tags[decodeURIComponent(p.slice(tagPrefix.length))]);
  res.writeHead(404).end();
}).listen(80, '169.254.169.254', () => process.stdout.write('listening\\n'));
`,
  );
  const child = spawn('nsenter', [`--net=/run/netns/${nn.ns}`, '--', process.execPath, script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the metadata server exited (${code})`)));
  });
  return {
    log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One node's file system: overlay upper folders, its console file, its /tmp; the shims installed. */
export interface NodeDisk {
  dir: string;
  console: string;
  /** A path inside the node as this machine sees it (its overlay's upper folder). */
  written(p: string): string;
  /** Folders of this machine bound into the node (this machine's path, the node's). */
  binds: Array<[string, string]>;
}

export interface DiskOptions {
  /** dnf fails for this package as dnf does for a name it cannot find. */
  failPackage?: string;
  /**
   * In place of npm ci: the node_modules of an earlier boot (the same package and lock give the same
   * tree), under an overlay, so a broken boot does not pay for a second install; then `unreadable` (a
   * path under node_modules) is made root-only (in the overlay: the earlier tree keeps its mode).
   */
  npmFrom?: string;
  unreadable?: string;
}

function awsCli(): string {
  const found = execFileSync('bash', ['-c', 'command -v pyenv >/dev/null && pyenv which aws 2>/dev/null || command -v aws'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  if (!found) throw new Error('the aws CLI is not on PATH: the node\'s user data uses it (AL2023 ships it); install awscli');
  return found;
}

export function nodeDisk(root: string, name: string, userData: string, o: DiskOptions = {}): NodeDisk {
  const dir = path.join(root, name);
  for (const d of OVERLAID) for (const layer of ['up', 'work']) fs.mkdirSync(path.join(dir, layer, d), { recursive: true });
  fs.mkdirSync(path.join(dir, 'tmp'), { mode: 0o1777 });
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  const console = path.join(dir, 'console');
  fs.writeFileSync(console, '');
  const written = (p: string) => path.join(dir, 'up', p);
  // cloud-init keeps the user data's script here on AL2023.
  const part = written('var/lib/cloud/instance/scripts/part-001');
  fs.mkdirSync(path.dirname(part), { recursive: true });
  fs.writeFileSync(part, userData, { mode: 0o700 });
  const shims = written(SHIM_DIR);
  fs.mkdirSync(shims, { recursive: true });
  const put = (n: string, text: string) => fs.writeFileSync(path.join(shims, n), text, { mode: 0o755 });
  put(
    'dnf',
    `#!/bin/bash
# The sandbox's dnf: AL2023's package names only; each installs what this machine has in its place.
echo "dnf $*" >>/var/log/rig-sandbox-dnf.log
[ "$1" = install ] || { echo "dnf (sandbox): only 'install' is known, got: $*" >&2; exit 2; }
shift
known=" ${AL2023_PACKAGES.join(' ')} "
for p in "$@"; do
  case "$p" in -*) continue ;; esac
  if [[ "$known" != *" $p "* ]]; then echo "dnf (sandbox): $p is not a package name of Amazon Linux 2023" >&2; exit 3; fi
  if [ "$p" = ${JSON.stringify(o.failPackage ?? '')} ]; then
    echo "No match for argument: $p"
    echo "Error: Unable to find a match: $p"
    exit 1
  fi
done
for p in "$@"; do
  case "$p" in
    nodejs22) ln -sf ${process.execPath} /usr/bin/node-22 ;;
    nodejs22-npm) printf '#!/bin/sh\\nexec /usr/bin/npm "$@"\\n' >/usr/bin/npm-22 && chmod 0755 /usr/bin/npm-22 ;;
    postgresql16|postgresql16-contrib) command -v pgbench >/dev/null && command -v psql >/dev/null ;;
    tar|gzip) command -v "$p" >/dev/null ;;
    *) ;;
  esac
done
echo "Complete!"
`,
  );
  put('systemctl', '#!/bin/bash\necho "systemctl $*" >>/var/log/rig-sandbox-systemctl.log\n');
  put('aws', `#!/bin/bash\nexec ${awsCli()} "$@"\n`);
  const binds: Array<[string, string]> = [];
  if (o.npmFrom) {
    // The overlay's own layers are on this machine's disk (bound in), so the worker's later mount
    // namespace mounts the same node_modules again (enterNode).
    fs.mkdirSync(written(NM_TREE), { recursive: true });
    fs.mkdirSync(written(NM_LAYERS), { recursive: true });
    for (const layer of ['up', 'work']) fs.mkdirSync(path.join(dir, 'nm', layer), { recursive: true });
    binds.push([o.npmFrom, NM_TREE], [path.join(dir, 'nm'), NM_LAYERS]);
    put(
      'npm-22',
      `#!/bin/bash
# The sandbox's stand-in for npm ci: an earlier boot's node_modules (same package, same lock), overlaid.
set -e
[ "$1" = ci ] || exit 2
mkdir -p node_modules
${NM_OVERLAY}
${o.unreadable ? `chmod 0600 node_modules/${o.unreadable}` : ''}
echo "added packages (sandbox: an earlier boot's tree)"
`,
    );
  }
  return { dir, console, written, binds };
}

/** The bash that makes a node's view (run under unshare -m), then runs `cmd` in its network namespace. */
function enterNode(disk: NodeDisk, nn: NodeNet, cmd: string): string {
  const mounts = OVERLAID.map((d) => `mount -t overlay overlay -o lowerdir=/${d},upperdir=${disk.dir}/up/${d},workdir=${disk.dir}/work/${d} /${d}`);
  const binds = disk.binds.map(([from, to]) => `mount --bind ${from} ${to}`);
  // The npm stand-in's node_modules, once the boot has made it (the worker's run).
  const nm = disk.binds.some(([, to]) => to === NM_TREE) ? [`if [ -d /opt/rig/app/node_modules ]; then ${NM_OVERLAY}; fi`] : [];
  return ['set -e', ...mounts, ...binds, ...nm, `mount --bind ${disk.console} /dev/console`, `mount --bind ${disk.dir}/tmp /tmp`, `exec nsenter --net=/run/netns/${nn.ns} -- ${cmd}`].join('\n');
}

export interface BootResult {
  code: number | null;
  /** What the node wrote to its serial console. */
  console: string;
}

/** Runs the user data whole, as root, as cloud-init does (its own script file, cloud-init's PATH). */
export async function bootNode(disk: NodeDisk, nn: NodeNet, env: Record<string, string>): Promise<BootResult> {
  const child = spawn('unshare', ['-m', '--propagation', 'private', 'bash', '-c', enterNode(disk, nn, 'bash /var/lib/cloud/instance/scripts/part-001')], {
    env: { PATH: CLOUD_INIT_PATH, HOME: '/root', LANG: 'C.UTF-8', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  // 'close', not 'exit': the script's tee to the console holds its stderr until it has written all.
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  // Output the script made before its exec to the console (a failed mount) is said here too.
  const consoleText = fs.readFileSync(disk.console, 'utf8');
  return { code, console: consoleText || out };
}

export interface Unit {
  user: string;
  group: string;
  workingDirectory: string;
  environment: Record<string, string>;
  environmentFiles: string[];
  execStart: string;
}

/** The [Service] lines the sandbox honours, as systemd reads them (Environment=K=V, one per line here). */
export function parseUnit(text: string): Unit {
  const service = text.split(/^\[Service\]$/m)[1]?.split(/^\[/m)[0];
  if (!service) throw new Error(`the unit has no [Service] section:\n${text}`);
  const u: Unit = { user: 'root', group: 'root', workingDirectory: '/', environment: {}, environmentFiles: [], execStart: '' };
  for (const line of service.split('\n')) {
    const m = /^(\w+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    const [, key, value] = m;
    if (key === 'User') u.user = value;
    else if (key === 'Group') u.group = value;
    else if (key === 'WorkingDirectory') u.workingDirectory = value;
    else if (key === 'EnvironmentFile') u.environmentFiles.push(value);
    else if (key === 'ExecStart') u.execStart = value;
    else if (key === 'Environment') {
      const eq = value.indexOf('=');
      u.environment[value.slice(0, eq)] = value.slice(eq + 1);
    }
  }
  if (!u.execStart) throw new Error(`the unit has no ExecStart:\n${text}`);
  return u;
}

/** systemd's EnvironmentFile: KEY="value" lines, \\ and " escaped inside the quotes. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|(.*))$/.exec(line);
    if (m) env[m[1]] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  return env;
}

/**
 * The unit's ExecStart as systemd would run it: as User=/Group= (setpriv, with the user's groups), in
 * WorkingDirectory=, umask 0022, with the environment systemd gives a service (PATH, HOME, USER, the
 * EnvironmentFile= and Environment= lines) plus `extra` (the sandbox's own: where AWS is).
 */
export function startUnit(disk: NodeDisk, nn: NodeNet, unit: Unit, extra: Record<string, string>): ChildProcess {
  const fileEnv = Object.assign({}, ...unit.environmentFiles.map((f) => parseEnvironmentFile(fs.readFileSync(disk.written(f), 'utf8')))) as Record<string, string>;
  const passwd = fs.readFileSync(disk.written('etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith(`${unit.user}:`));
  if (!passwd) throw new Error(`the node has no user ${unit.user} (useradd did not run)`);
  const env = { PATH: SYSTEMD_PATH, LANG: 'C.UTF-8', HOME: passwd.split(':')[5], USER: unit.user, LOGNAME: unit.user, SHELL: passwd.split(':')[6], ...fileEnv, ...unit.environment, ...extra };
  const cmd = `setpriv --reuid=${unit.user} --regid=${unit.group} --init-groups -- ${unit.execStart}`;
  const script = enterNode(disk, nn, `bash -c ${shellQuote(`cd ${unit.workingDirectory} && umask 0022 && exec ${cmd}`)}`);
  return spawn('unshare', ['-m', '--propagation', 'private', 'bash', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A fresh folder for the boots (removed by the caller): not under a path a boot's mounts hide. */
export function sandboxRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rig-node-boot-'));
}
