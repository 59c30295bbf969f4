// The user data of the app and load nodes: a bash script for Amazon Linux 2023 that installs Node 22
// (AL2023's namespaced nodejs22 packages: node-22, npm-22; Node 20 reached end of life in April 2026) and, on the load node, pgbench for
// PostgreSQL 16; fetches the campaign's package from S3 and checks its sha256; reads the Temporal
// connection from Secrets Manager with the instance role (the aws CLI v2 ships with AL2023); writes
// the worker's environment file (0600) through the package's own scripts/node-temporal-env.cjs; and
// runs `rig worker` for the node's queue as a systemd unit that restarts on failure. An app node whose
// campaign measures a container image (`service.run.image`) also gets Docker, its worker's user in the
// docker group.
//
// Pure: it renders from names, keys and ARNs only, and holds no secret. That matters because anyone
// with ec2:DescribeInstanceAttribute can read user data: the Temporal credentials and the database
// password travel only from Secrets Manager to files on the node, through a pipe, never through argv,
// this script's text or its log (/var/log/rig-bootstrap.log, where everything else goes).
//
// Seen from outside: the log is also written to the serial console (/dev/console), which EC2's
// GetConsoleOutput returns (no SSH, no SSM here): a node whose worker never comes up is diagnosed from
// the control host (console.ts; the campaign's NoWorker failure carries its tail). Each network step
// (the instance role's credentials from IMDS, the S3 fetches, dnf, npm, the secret's read) goes
// through retry(): a seconds-old instance profile, a mirror or a registry that is briefly away fails
// the first try on a real first boot; backoff from 5 s doubling to 60 s, 8 tries (about 4.5 minutes).
//
// Cannot outlive its campaign: the node is launched with InstanceInitiatedShutdownBehavior=terminate
// (provision.ts), so a poweroff from inside ends (and stops billing) the instance. rig-deadline.timer
// runs /usr/local/sbin/rig-deadline every minute: it reads the instance's own rig:expires tag from
// instance metadata (InstanceMetadataTags enabled at launch; IMDSv2), keeps the last one it read, and
// powers off once the time is past it. The expiry re-tag (retag.ts: `extend`, the campaign's
// hold-until) moves that tag, so the switch is re-armed within a minute, with no call from the control
// host and no permission of the node's role. Until the first read it holds boot + the spec's
// watchdogMinutes. Its limit: a node whose metadata stops answering keeps the last deadline it read,
// so an extend it never sees ends it at the older deadline (the watchdog's own teardown is at the
// same time or earlier). The check needs the node's clock (chrony with Amazon Time Sync on AL2023).
//
// Run whole, as root, in a sandbox shaped like an AL2023 node (test/targets/aws/node-boot.test.ts:
// its own network namespace and IMDSv2, moto, dnf held to AL2023's package names, no systemd: the
// unit's ExecStart run as its User=). To be checked on a real AL2023 node (no test here reaches one): that pgbench comes with
// postgresql16-contrib (Fedora, which AL2023 follows, moved pgbench there; postgresql16 is installed
// beside it for psql and the libraries). The script fails, naming it, if pgbench is still missing.

/** EC2's limit on user data, before base64. */
export const USER_DATA_MAX_BYTES = 16 * 1024;
export const BOOTSTRAP_LOG = '/var/log/rig-bootstrap.log';
export const WORKER_UNIT = 'rig-worker.service';
/** Where the node's own end is decided (see the head of this file). */
export const DEADLINE_SCRIPT = '/usr/local/sbin/rig-deadline';
export const DEADLINE_STATE = '/var/lib/rig-deadline';
/** How long systemd lets the worker drain on stop: its shutdown grace (11 min, client/commands/worker.ts) and a minute. */
const STOP_TIMEOUT_S = 12 * 60;

export interface UserDataInput {
  node: 'app' | 'load';
  /**
   * The name its evidence ships under (RIG_AWS_NODE, evidence-sync.ts): `load-n<i>` for load node i
   * beyond the data plane's (issue 37), which boots as the load node does and serves its own queue.
   * Absent: `node`.
   */
  nodeName?: string;
  campaignId: string;
  /** The node's host name for the rig (RIG_HOST): its EC2 Name tag. */
  hostName: string;
  /** The task queue its worker serves (awsDataQueue / awsAppQueue). */
  queue: string;
  region: string;
  bucket: string;
  tarballKey: string;
  lockKey: string;
  packageSha256: string;
  /** The campaign's Temporal secret (its ARN: a name, not a value). */
  temporalSecretId: string;
  /** App node only: Docker for the spec's `service.run.image` (issue 14), usable by the worker's user. */
  docker?: boolean;
  /** The deadline until the node has read its rig:expires tag: boot + this (the spec's watchdogMinutes; the same in every attempt, as RunInstances' ClientToken needs). */
  lifetimeMinutes: number;
  /**
   * The build the provisioning worker polls as (lib/tools/build-id.ts): the node's worker polls as the
   * same Worker Deployment version, so the campaign, pinned to that build, finds it. The package has
   * no .git to derive it from.
   */
  buildId?: string;
}

/**
 * retry WHAT CMD...: CMD until it succeeds, at most RETRY_ATTEMPTS times, waiting RETRY_BASE_S and then
 * twice as long each time (at most 60 s); every failure is said on stderr (the log and the console).
 * Between its markers so a test runs this very text (test/targets/aws/user-data.test.ts).
 */
export const RETRY_FUNCTION = `# >>> retry
retry() {
  local what=$1 attempt=1 delay=\${RETRY_BASE_S:-5} rc
  shift
  until "$@"; do
    rc=$?
    if [ "$attempt" -ge "\${RETRY_ATTEMPTS:-8}" ]; then
      echo "rig bootstrap: $what failed $attempt times (last exit $rc): giving up" >&2
      return "$rc"
    fi
    echo "rig bootstrap: $what failed (exit $rc, try $attempt of \${RETRY_ATTEMPTS:-8}): again in \${delay}s" >&2
    sleep "$delay"
    attempt=$((attempt + 1))
    delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
}
# <<< retry`;

/**
 * The deadline check (see the head of this file): IMDS is IMDS_URL (the link-local address; a test
 * points it elsewhere), the state file DEADLINE_STATE holds the deadline in epoch seconds, what it says
 * goes to RIG_CONSOLE (the serial console; the journal has it too, through systemd).
 */
export const DEADLINE_CHECK = `#!/bin/bash
# rig-deadline: powers this node off once it is past its rig:expires tag (launched with
# InstanceInitiatedShutdownBehavior=terminate: the poweroff terminates it). Run every minute by
# rig-deadline.timer. Rendered by lib/targets/aws/user-data.ts.
set -u
IMDS=\${IMDS_URL:-http://169.254.169.254}
STATE=\${DEADLINE_STATE:-${DEADLINE_STATE}}
CONSOLE=\${RIG_CONSOLE:-/dev/console}
token=$(curl -sf -m 5 -X PUT "$IMDS/latest/api/token" -H 'X-aws-ec2-metadata-token-ttl-seconds: 60') || token=
if [ -n "$token" ]; then
  tag=$(curl -sf -m 5 -H "X-aws-ec2-metadata-token: $token" "$IMDS/latest/meta-data/tags/instance/rig:expires") || tag=
  if [ -n "$tag" ] && at=$(date -d "$tag" +%s 2>/dev/null); then
    [ "$at" = "$(cat "$STATE" 2>/dev/null)" ] || echo "rig-deadline: rig:expires is $tag" >"$CONSOLE" 2>/dev/null || true
    echo "$at" >"$STATE"
  fi
fi
at=$(cat "$STATE" 2>/dev/null) || exit 0
if [ "$(date +%s)" -ge "$at" ]; then
  echo "rig-deadline: $(date -u -Is) is past this node's deadline $(date -u -d "@$at" -Is): powering off (the instance terminates)" >>"$CONSOLE" 2>/dev/null || true
  systemctl poweroff
fi`;

/** Single-quoted for bash: safe for any value. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const SAFE = /^[A-Za-z0-9._:/@+=,-]+$/;
function plain(field: string, v: string): string {
  // Values that also go into the systemd unit, where bash quoting does not apply.
  if (!SAFE.test(v)) throw new Error(`user data: ${field} ${JSON.stringify(v)} has characters a systemd unit line cannot carry plainly (allowed: ${SAFE.source})`);
  return v;
}

export function renderUserData(u: UserDataInput): string {
  const queue = plain('queue', u.queue);
  const host = plain('hostName', u.hostName);
  const region = plain('region', u.region);
  const bucket = plain('bucket', u.bucket);
  const buildId = u.buildId === undefined ? undefined : plain('buildId', u.buildId);
  if (!/^[0-9a-f]{64}$/.test(u.packageSha256)) throw new Error(`user data: packageSha256 must be 64 hex characters, got ${JSON.stringify(u.packageSha256)}`);
  if (!Number.isFinite(u.lifetimeMinutes) || u.lifetimeMinutes <= 0) throw new Error(`user data: lifetimeMinutes must be a positive number of minutes, got ${u.lifetimeMinutes}`);
  const load = u.node === 'load';
  const docker = u.node === 'app' && u.docker === true;
  const name = plain('nodeName', u.nodeName ?? u.node);
  const script = `#!/bin/bash
# rig bootstrap: the ${name} node of campaign ${JSON.stringify(u.campaignId).slice(1, -1).replace(/[\r\n]/g, ' ')}, worker on task queue ${queue}.
# Rendered by lib/targets/aws/user-data.ts. Holds no secret: the Temporal connection is read from
# Secrets Manager with this instance's role.
set -euo pipefail
# The log, and the serial console (EC2 GetConsoleOutput): no SSH or SSM reaches this node.
# tee opens the console itself: one that cannot be opened costs the console copy, never the log.
exec > >(tee -a ${BOOTSTRAP_LOG} /dev/console >/dev/null) 2>&1
trap 'echo "rig bootstrap: FAILED at line $LINENO (exit $?) $(date -Is)"' ERR
echo "rig bootstrap: start $(date -Is)"
umask 077

${RETRY_FUNCTION}

# The node's own end first, before anything can fail: boot + the campaign's watchdog minutes until it
# reads its rig:expires tag (${DEADLINE_SCRIPT}).
install -d -m 0755 "$(dirname ${DEADLINE_STATE})"
[ -s ${DEADLINE_STATE} ] || echo $(( $(date +%s) + ${Math.round(u.lifetimeMinutes) * 60} )) >${DEADLINE_STATE}
cat >${DEADLINE_SCRIPT} <<'DEADLINE'
${DEADLINE_CHECK}
DEADLINE
chmod 0755 ${DEADLINE_SCRIPT}
cat >/etc/systemd/system/rig-deadline.service <<'UNIT'
[Unit]
Description=rig: power off (terminate) this node once past its rig:expires tag

[Service]
Type=oneshot
ExecStart=${DEADLINE_SCRIPT}
UNIT
cat >/etc/systemd/system/rig-deadline.timer <<'UNIT'
[Unit]
Description=rig: check this node's deadline every minute

[Timer]
OnBootSec=1min
OnUnitActiveSec=1min
AccuracySec=10s

[Install]
WantedBy=timers.target
UNIT
chmod 0644 /etc/systemd/system/rig-deadline.service /etc/systemd/system/rig-deadline.timer
systemctl daemon-reload
systemctl enable --now rig-deadline.timer

# The instance role's credentials, from instance metadata: the profile is seconds old at first boot.
role_credentials() {
  local token
  token=$(curl -sf -m 5 -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300') &&
    curl -sf -m 5 -H "X-aws-ec2-metadata-token: $token" http://169.254.169.254/latest/meta-data/iam/security-credentials/ | grep -q .
}
retry "the instance role's credentials (IMDS)" role_credentials

REGION=${shq(region)}
BUCKET=${shq(u.bucket)}
TARBALL_KEY=${shq(u.tarballKey)}
LOCK_KEY=${shq(u.lockKey)}
PACKAGE_SHA256=${shq(u.packageSha256)}
SECRET_ID=${shq(u.temporalSecretId)}
APP=/opt/rig/app
ETC=/etc/rig

echo "rig bootstrap: installing Node 22${load ? ' and pgbench (PostgreSQL 16)' : ''}"
retry "dnf install" dnf install -y nodejs22 nodejs22-npm tar gzip${load ? ' postgresql16 postgresql16-contrib' : ''}
${load ? `command -v pgbench >/dev/null || { echo "rig bootstrap: pgbench is not on PATH after installing postgresql16 and postgresql16-contrib: find the AL2023 package that ships it"; exit 1; }\n` : ''}command -v aws >/dev/null || retry "dnf install awscli-2" dnf install -y awscli-2
id rig >/dev/null 2>&1 || useradd --system --create-home --home-dir /var/lib/rig --shell /sbin/nologin rig
${docker ? `echo "rig bootstrap: installing Docker for the service's image"\nretry "dnf install docker" dnf install -y docker\nsystemctl enable --now docker\nusermod -aG docker rig\n` : ''}install -d -o rig -g rig -m 0700 /var/lib/rig/state

echo "rig bootstrap: fetching the package s3://$BUCKET/$TARBALL_KEY"
tmp=$(mktemp -d)
retry "s3 get-object $TARBALL_KEY" aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$TARBALL_KEY" "$tmp/rig.tgz" >/dev/null
retry "s3 get-object $LOCK_KEY" aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$LOCK_KEY" "$tmp/package-lock.json" >/dev/null
got=$(cat "$tmp/rig.tgz" "$tmp/package-lock.json" | sha256sum | cut -d' ' -f1)
[ "$got" = "$PACKAGE_SHA256" ] || { echo "rig bootstrap: package sha256 $got, expected $PACKAGE_SHA256"; exit 1; }
rm -rf "$APP"
install -d -m 0755 "$APP"
tar -xzf "$tmp/rig.tgz" -C "$APP" --strip-components=1
cp "$tmp/package-lock.json" "$APP/package-lock.json"
rm -rf "$tmp"
chmod -R go+rX "$APP"

# Before npm ci (the slow step), so a secret the role cannot read fails the boot in seconds.
echo "rig bootstrap: writing the worker's environment from secret $SECRET_ID"
install -d -m 0755 "$ETC"
# In a variable, not a file or argv; printf is a builtin (no process sees it in its arguments).
secret=$(retry "reading secret $SECRET_ID" aws secretsmanager get-secret-value --region "$REGION" --secret-id "$SECRET_ID" --query SecretString --output text)
printf '%s' "$secret" \\
  | node-22 "$APP/scripts/node-temporal-env.cjs" "$ETC" "$(id -u rig)" "$(id -g rig)"
unset secret

# umask 022 for npm: its tar extraction follows the process umask, and under this script's 077 it
# would leave node_modules root-only, which the worker (User=rig) cannot load.
(cd "$APP" && umask 022 && retry "npm ci" npm-22 ci --omit=dev --ignore-scripts --no-audit --no-fund)
# The worker's code must load as its own user before the unit is started: otherwise systemd restarts
# a worker that cannot start, and this log would still end in "done". A file rig cannot read makes
# node say only "Cannot find module": the first few such paths are named.
echo "rig bootstrap: loading the worker's code as user rig"
if ! (cd "$APP" && runuser -u rig -- node-22 -e "require('tsx/cjs'); require('./client/commands/worker.ts')"); then
  unreadable=$(runuser -u rig -- find "$APP" \\( ! -readable -o -type d ! -executable \\) -print -prune 2>/dev/null | head -n 3 | tr '\\n' ' ') || true
  echo "rig bootstrap: the worker's code does not load as user rig\${unreadable:+ (rig cannot read: \${unreadable% })}: not starting ${WORKER_UNIT}"
  exit 1
fi

cat >/etc/systemd/system/${WORKER_UNIT} <<'UNIT'
[Unit]
Description=rig worker (${name} node, task queue ${queue})
Wants=network-online.target
After=network-online.target

[Service]
User=rig
Group=rig
WorkingDirectory=/opt/rig/app
EnvironmentFile=/etc/rig/worker.env
Environment=RIG_STATE_DIR=/var/lib/rig/state
Environment=RIG_HOST=${host}
Environment=AWS_REGION=${region}
Environment=RIG_AWS_NODE=${name}
Environment=RIG_AWS_ARTIFACTS_BUCKET=${bucket}${buildId ? `\nEnvironment=RIG_BUILD_ID=${buildId}` : ''}
ExecStart=/usr/bin/node-22 /opt/rig/app/bin/rig.cjs worker --task-queue ${queue}
Restart=on-failure
RestartSec=10
TimeoutStopSec=${STOP_TIMEOUT_S}

[Install]
WantedBy=multi-user.target
UNIT
chmod 0644 /etc/systemd/system/${WORKER_UNIT}
systemctl daemon-reload
systemctl enable --now ${WORKER_UNIT}
echo "rig bootstrap: done, ${WORKER_UNIT} started $(date -Is)"
`;
  const bytes = Buffer.byteLength(script);
  if (bytes > USER_DATA_MAX_BYTES) throw new Error(`user data is ${bytes} bytes, over EC2's ${USER_DATA_MAX_BYTES}`);
  return script;
}
