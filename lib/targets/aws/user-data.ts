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
// To be checked on a real AL2023 node (no test here reaches one): that pgbench comes with
// postgresql16-contrib (Fedora, which AL2023 follows, moved pgbench there; postgresql16 is installed
// beside it for psql and the libraries). The script fails, naming it, if pgbench is still missing.

/** EC2's limit on user data, before base64. */
export const USER_DATA_MAX_BYTES = 16 * 1024;
export const BOOTSTRAP_LOG = '/var/log/rig-bootstrap.log';
export const WORKER_UNIT = 'rig-worker.service';
/** How long systemd lets the worker drain on stop: its shutdown grace (11 min, client/commands/worker.ts) and a minute. */
const STOP_TIMEOUT_S = 12 * 60;

export interface UserDataInput {
  node: 'app' | 'load';
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
  /**
   * The build the provisioning worker polls as (lib/tools/build-id.ts): the node's worker polls as the
   * same Worker Deployment version, so the campaign, pinned to that build, finds it. The package has
   * no .git to derive it from.
   */
  buildId?: string;
}

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
  const load = u.node === 'load';
  const docker = u.node === 'app' && u.docker === true;
  const script = `#!/bin/bash
# rig bootstrap: the ${u.node} node of campaign ${JSON.stringify(u.campaignId).slice(1, -1).replace(/[\r\n]/g, ' ')}, worker on task queue ${queue}.
# Rendered by lib/targets/aws/user-data.ts. Holds no secret: the Temporal connection is read from
# Secrets Manager with this instance's role.
set -euo pipefail
exec >>${BOOTSTRAP_LOG} 2>&1
trap 'echo "rig bootstrap: FAILED at line $LINENO (exit $?) $(date -Is)"' ERR
echo "rig bootstrap: start $(date -Is)"
umask 077

REGION=${shq(region)}
BUCKET=${shq(u.bucket)}
TARBALL_KEY=${shq(u.tarballKey)}
LOCK_KEY=${shq(u.lockKey)}
PACKAGE_SHA256=${shq(u.packageSha256)}
SECRET_ID=${shq(u.temporalSecretId)}
APP=/opt/rig/app
ETC=/etc/rig

echo "rig bootstrap: installing Node 22${load ? ' and pgbench (PostgreSQL 16)' : ''}"
dnf install -y nodejs22 nodejs22-npm tar gzip${load ? ' postgresql16 postgresql16-contrib' : ''}
${load ? `command -v pgbench >/dev/null || { echo "rig bootstrap: pgbench is not on PATH after installing postgresql16 and postgresql16-contrib: find the AL2023 package that ships it"; exit 1; }\n` : ''}command -v aws >/dev/null || dnf install -y awscli-2
id rig >/dev/null 2>&1 || useradd --system --create-home --home-dir /var/lib/rig --shell /sbin/nologin rig
${docker ? `echo "rig bootstrap: installing Docker for the service's image"\ndnf install -y docker\nsystemctl enable --now docker\nusermod -aG docker rig\n` : ''}install -d -o rig -g rig -m 0700 /var/lib/rig/state

echo "rig bootstrap: fetching the package s3://$BUCKET/$TARBALL_KEY"
tmp=$(mktemp -d)
aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$TARBALL_KEY" "$tmp/rig.tgz" >/dev/null
aws s3api get-object --region "$REGION" --bucket "$BUCKET" --key "$LOCK_KEY" "$tmp/package-lock.json" >/dev/null
got=$(cat "$tmp/rig.tgz" "$tmp/package-lock.json" | sha256sum | cut -d' ' -f1)
[ "$got" = "$PACKAGE_SHA256" ] || { echo "rig bootstrap: package sha256 $got, expected $PACKAGE_SHA256"; exit 1; }
rm -rf "$APP"
install -d -m 0755 "$APP"
tar -xzf "$tmp/rig.tgz" -C "$APP" --strip-components=1
cp "$tmp/package-lock.json" "$APP/package-lock.json"
rm -rf "$tmp"
chmod -R go+rX "$APP"
(cd "$APP" && npm-22 ci --omit=dev --ignore-scripts --no-audit --no-fund)

echo "rig bootstrap: writing the worker's environment from secret $SECRET_ID"
install -d -m 0755 "$ETC"
aws secretsmanager get-secret-value --region "$REGION" --secret-id "$SECRET_ID" --query SecretString --output text \\
  | node-22 "$APP/scripts/node-temporal-env.cjs" "$ETC" "$(id -u rig)" "$(id -g rig)"

cat >/etc/systemd/system/${WORKER_UNIT} <<'UNIT'
[Unit]
Description=rig worker (${u.node} node, task queue ${queue})
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
Environment=RIG_AWS_NODE=${u.node}
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
