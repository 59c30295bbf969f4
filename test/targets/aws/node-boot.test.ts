// The nodes' user data executed whole, as root, in a sandbox shaped like an Amazon Linux 2023 node
// (test/harness/node-sandbox.ts: its own network namespace with IMDSv2 at 169.254.169.254, overlays
// over /etc /usr /opt /var /root, dnf held to AL2023's package names, no systemd), against moto's S3
// and Secrets Manager and the test's Temporal dev server. The unit the user data writes is read and
// its ExecStart run as its User= with its environment: the load node's worker must poll its queue and
// take the campaign's prepare step. Then three broken boots (a package dnf cannot install, a file the
// worker cannot read, a secret that is not there): each stops the boot, its console says what broke,
// and the campaign's failure carries that console's tail. Once the load node has booted, the app
// node's boot and the broken ones run side by side (each boot its own disk and console).
//
// Why: the user data was only ever read (user-data.test.ts) and run in fragments
// (user-data-bash.test.ts); the whole script, run as a node runs it, left node_modules root-only under
// its umask 077 and still ended in "bootstrap: done" (issue 32). What no test here reaches: a real
// AL2023 image (its dnf, Node 22, awscli v2, systemd, cloud-init), real IAM on the role, EC2's
// GetConsoleOutput (moto's has no console text: the campaign's console read is fed what the sandbox's
// console file holds), and RDS (prepare is taken by the node's worker and fails there, at the
// database moto does not run).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { temporal as temporalio } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { CampaignResult } from '../../../lib/protocol/campaign-result';
import { PROFILES } from '../../../lib/protocol/spec';
import type { NodeBootstrap } from '../../../lib/targets/aws/bootstrap';
import { nodeUserDataInput } from '../../../lib/targets/aws/bootstrap';
import { ensureBucket } from '../../../lib/targets/aws/bucket';
import { awsClients, type AwsClients } from '../../../lib/targets/aws/clients';
import { consoleTail } from '../../../lib/targets/aws/console';
import { buildPackage, uploadPackage } from '../../../lib/targets/aws/package';
import { ensureTemporalSecret } from '../../../lib/targets/aws/temporal-secret';
import { renderUserData } from '../../../lib/targets/aws/user-data';
import { awsAppQueue, awsDataQueue } from '../../../lib/temporal/queues';
import { activityDoubles, doubleWorker } from '../../campaign/doubles';
import { waitFor, waitOnCampaign } from '../../harness/campaign';
import { startMoto, type Moto } from '../../harness/moto';
import { bootNode, nodeDisk, nodeNetwork, parseUnit, sandboxRoot, startImds, startUnit, type BootResult, type NodeDisk, type NodeNet } from '../../harness/node-sandbox';
import { localDevEnv } from '../../harness/temporal';

const REGION = 'us-east-1';
const CAMPAIGN = 'node-boot';
const ADMIN = { accessKeyId: 'testing', secretAccessKey: 'testing' };

let root = '';
let moto: Moto;
let temporal: TestWorkflowEnvironment;
let nn: NodeNet;
let imds: Awaited<ReturnType<typeof startImds>>;
let c: AwsClients;
let boot: NodeBootstrap;
/** What the boots get from "cloud-init": where AWS is (moto, through the relay), npm's cache, short retries. */
let bootEnv: Record<string, string>;
let workerEnv: Record<string, string>;
let good: NodeDisk | undefined;
const children: ChildProcess[] = [];

before(async () => {
  root = sandboxRoot();
  [moto, temporal, nn] = await Promise.all([startMoto(), localDevEnv(), nodeNetwork()]);
  const [motoPort, temporalPort] = await Promise.all([nn.relay(moto.port), nn.relay(Number(temporal.address.split(':').pop()))]);
  const awsAt = `http://${nn.hostIp}:${motoPort}`;
  imds = await startImds(nn, root, { region: REGION, instanceId: 'i-0b00700000000load', role: 'rig-node-boot-node', tags: { Name: 'rig-node-boot-load', 'rig:expires': new Date(Date.now() + 3 * 3600_000).toISOString() } });
  c = awsClients(REGION, { RIG_AWS_ENDPOINT: moto.endpoint }, ADMIN);
  // The package as provisioning packs and uploads it, and the Temporal secret naming the test's server
  // at the address the node reaches it on.
  const bucket = 'rig-node-boot-0123abcd-123456789012';
  await ensureBucket(c, bucket, []);
  const pkg = await buildPackage();
  const keys = await uploadPackage(c, bucket, pkg);
  const secretArn = await ensureTemporalSecret(c, 'rig/node-boot/temporal', { address: `${nn.hostIp}:${temporalPort}`, namespace: 'default', tls: false }, []);
  boot = {
    bucket,
    tarballKey: keys.tarball,
    lockKey: keys.lock,
    packageSha256: pkg.sha256,
    temporalSecretArn: secretArn,
    instanceProfileArn: 'arn:aws:iam::123456789012:instance-profile/rig/rig-node-boot-node',
    dataQueue: awsDataQueue(CAMPAIGN),
    appQueue: awsAppQueue(CAMPAIGN),
  };
  bootEnv = { AWS_ENDPOINT_URL: awsAt, npm_config_offline: 'true', npm_config_cache: '/root/.npm', RETRY_BASE_S: '0', RETRY_ATTEMPTS: '2' };
  workerEnv = { RIG_AWS_ENDPOINT: awsAt };
});

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await imds?.stop();
  await nn?.close();
  c?.destroy();
  await temporal?.teardown();
  await moto?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function userData(node: 'app' | 'load', b: NodeBootstrap = boot, docker = false): string {
  return renderUserData(nodeUserDataInput(CAMPAIGN, REGION, node, b, { lifetimeMinutes: 90, buildId: 'node-boot-test', docker }));
}

const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Where the campaign's rig "is": the data-plane queue its provision names, and what its nodes' consoles say. */
interface Route {
  dataQueue: string;
  console: string;
}

/**
 * Activity doubles on the control queues (the workflow is the real one) for campaigns run one after
 * another: their provision names an AWS rig on route().dataQueue, so the node's real prepareRig takes
 * the AWS path, and the console read answers route().console. stop() before the next set.
 */
async function controlWorkers(route: () => Route): Promise<{ start(id: string, workerWaitSeconds: number): Promise<WorkflowHandle>; stop(): Promise<void> }> {
  const doubles = activityDoubles({ dataQueue: 'rig-data-unused', nodes: { appQueue: boot.appQueue, console: '' } });
  const d = doubles.activities;
  const activities = {
    ...d,
    provisionRig: async (i: Parameters<typeof d.provisionRig>[0]) => ({ ...(await d.provisionRig(i)), target: 'aws' as const, dataQueue: route().dataQueue }),
    nodeConsoleTail: async (i: Parameters<typeof d.nodeConsoleTail>[0]) => ({ ...(await d.nodeConsoleTail(i)), tail: route().console }),
  };
  const workers: Worker[] = await Promise.all(['rig', doubles.hostQueue].map((q) => doubleWorker(temporal.nativeConnection, q, activities)));
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    start: (id, workerWaitSeconds) => temporal.client.workflow.start('benchCampaign', { taskQueue: 'rig', workflowId: id, args: [{ ...PROFILES.rehearsal, workerWaitSeconds }] }),
    async stop() {
      workers.forEach((w) => w.shutdown());
      await running;
    },
  };
}

test('the load node boots from its user data as AL2023 runs it: node_modules readable by rig, its worker (User=rig) polls its queue and takes the campaign\'s prepare', { timeout: 240_000 }, async () => {
  const disk = nodeDisk(root, 'load', userData('load'));
  // The campaign first: it waits at prepare (up to workerWaitSeconds) for a worker on the node's queue.
  const control = await controlWorkers(() => ({ dataQueue: boot.dataQueue, console: '' }));
  const handle = await control.start('node-boot-prepare', 300);
  const r = await bootNode(disk, nn, bootEnv);
  assert.equal(r.code, 0, `the boot failed:\n${r.console}`);
  // Under the script's umask 077, what npm wrote is still readable by the worker's user.
  for (const p of ['opt/rig/app/node_modules', 'opt/rig/app/node_modules/tsx', 'opt/rig/app/node_modules/tsx/package.json']) {
    const m = mode(disk.written(p));
    assert.equal(m & 0o004, 0o004, `/${p} is ${m.toString(8).padStart(4, '0')}, owned by uid ${fs.statSync(disk.written(p)).uid}: the worker (User=rig) cannot read it`);
  }
  assert.match(r.console, /^rig bootstrap: loading the worker's code as user rig$/m);
  assert.match(r.console, /^rig bootstrap: done, rig-worker\.service started /m);
  assert.equal(mode(disk.written('etc/rig/worker.env')), 0o600, 'the worker environment file stays root-only (systemd reads it)');
  const imdsLog = fs.readFileSync(imds.log, 'utf8');
  assert.match(imdsLog, /^PUT \/latest\/api\/token$/m, 'IMDSv2: a token first');
  assert.match(imdsLog, /^GET \/latest\/meta-data\/iam\/security-credentials\/rig-node-boot-node$/m, 'the instance role\'s credentials from metadata');
  const dnf = fs.readFileSync(disk.written('var/log/rig-sandbox-dnf.log'), 'utf8');
  assert.equal(dnf.trim(), 'dnf install -y nodejs22 nodejs22-npm tar gzip postgresql16 postgresql16-contrib');
  assert.match(fs.readFileSync(disk.written('var/log/rig-sandbox-systemctl.log'), 'utf8'), /^systemctl enable --now rig-worker\.service$/m);

  const unit = parseUnit(fs.readFileSync(disk.written('etc/systemd/system/rig-worker.service'), 'utf8'));
  assert.deepEqual([unit.user, unit.group, unit.workingDirectory], ['rig', 'rig', '/opt/rig/app']);
  const worker = startUnit(disk, nn, unit, workerEnv);
  children.push(worker);
  let journal = '';
  worker.stdout!.on('data', (d: Buffer) => (journal += d));
  worker.stderr!.on('data', (d: Buffer) => (journal += d));
  const exited = new Promise<number | null>((r) => worker.once('exit', (code) => r(code)));

  try {
    // The node's worker took prepareRig: its attempt failed there, at the database (moto runs none).
    const taken = await Promise.race([
      waitOnCampaign(handle, 'the load node\'s worker to take prepareRig', async () => {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        const prepare = pending.find((a) => a.activityType?.name === 'prepareRig');
        return prepare?.lastFailure?.message ? prepare : undefined;
      }, 150_000),
      exited.then((code) => assert.fail(`the node's worker exited (${code}) before it took prepare:\n${journal}`)),
    ]);
    assert.ok(taken.lastWorkerIdentity?.startsWith(`${worker.pid}@${os.hostname()} `), `${taken.lastWorkerIdentity}: taken by the node's worker (its pid here: the sandbox shares this machine's pid and host name namespaces)`);
    assert.match(taken.lastFailure!.message!, /DBInstance|RDS instance/, taken.lastFailure!.message!);
    assert.match(journal, /^rig worker on 10\.200\.\d+\.1:\d+ .*build node-boot-test .*task queues: rig-aws-data-/m);
    assert.equal(fs.statSync(disk.written('var/lib/rig/state')).uid, Number(fs.readFileSync(disk.written('etc/passwd'), 'utf8').match(/^rig:x:(\d+):/m)![1]), 'the worker\'s state is rig\'s');
  } finally {
    await handle.terminate('test over').catch(() => undefined);
    await control.stop();
    worker.kill('SIGKILL');
    await exited;
  }
  good = disk;
});

// Both need only the load node's tree (the first test's): side by side.
describe('after the load node\'s boot', { concurrency: true }, () => {
  test('the app node boots from its user data too (npm ci\'s tree is the load node\'s: the same package and lock), and its worker, as rig, polls the app queue', { timeout: 180_000 }, async () => {
    assert.ok(good, 'the load node booted first');
    const disk = nodeDisk(root, 'app', userData('app'), { npmFrom: good.written('opt/rig/app/node_modules') });
    const r = await bootNode(disk, nn, bootEnv);
    assert.equal(r.code, 0, `the boot failed:\n${r.console}`);
    assert.match(r.console, /^rig bootstrap: done, rig-worker\.service started /m);
    assert.equal(fs.readFileSync(disk.written('var/log/rig-sandbox-dnf.log'), 'utf8').trim(), 'dnf install -y nodejs22 nodejs22-npm tar gzip', 'no pgbench on the app node');
    const unit = parseUnit(fs.readFileSync(disk.written('etc/systemd/system/rig-worker.service'), 'utf8'));
    assert.equal(unit.environment.RIG_AWS_NODE, 'app');
    const worker = startUnit(disk, nn, unit, workerEnv);
    children.push(worker);
    let journal = '';
    worker.stdout!.on('data', (d: Buffer) => (journal += d));
    worker.stderr!.on('data', (d: Buffer) => (journal += d));
    try {
      // A rig worker's identity starts with the SDK's `<pid>@<hostname>` (lib/temporal/worker-identity.ts).
      const identity = `${worker.pid}@${os.hostname()} `;
      await waitFor('the app node\'s worker to poll the app queue', async () => {
        if (worker.exitCode !== null) throw Object.assign(new Error(`the app node's worker exited (${worker.exitCode}):\n${journal}`), { fatal: true });
        const q = await temporal.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: boot.appQueue }, taskQueueType: temporalio.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY });
        return (q.pollers ?? []).some((p) => p.identity?.startsWith(identity));
      }, 150_000);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  test('three broken boots stop where they break, say it on the console, and the campaign\'s failure carries that tail', { timeout: 180_000 }, async () => {
    assert.ok(good, 'the good boot ran first (its node_modules stand in for a second install)');
    const tree = good.written('opt/rig/app/node_modules');
    // The three boots side by side: each its own disk (its own overlays and console), the same network.
    // 1. A package dnf cannot install: the app node's Docker (a spec with service.run.image).
    const app = nodeDisk(root, 'app-docker', userData('app', boot, true), { failPackage: 'docker' });
    // 2. A file the worker cannot read (left root-only in node_modules).
    const unreadable = nodeDisk(root, 'load-unreadable', userData('load'), { npmFrom: tree, unreadable: 'tsx/package.json' });
    // 3. A secret it cannot fetch: the one its user data names is not there.
    const missing = { ...boot, temporalSecretArn: `arn:aws:secretsmanager:${REGION}:123456789012:secret:rig/node-boot/gone-AbCdEf` };
    const noSecret = nodeDisk(root, 'load-no-secret', userData('load', missing), { npmFrom: tree });
    const [appBoot, unreadableBoot, noSecretBoot] = await Promise.all([app, unreadable, noSecret].map((disk) => bootNode(disk, nn, bootEnv)));
    const broken: Array<[string, BootResult, RegExp]> = [
      ['app-node i-0b00700000000app0', appBoot, /Error: Unable to find a match: docker[\s\S]*dnf install docker failed 2 times \(last exit 1\): giving up/],
      ['load-node i-0b00700000000load', unreadableBoot, /the worker's code does not load as user rig \(rig cannot read: \/opt\/rig\/app\/node_modules\/tsx\/package\.json\): not starting rig-worker\.service/],
      ['load-node i-0b00700000000load', noSecretBoot, /ResourceNotFoundException[\s\S]*reading secret arn:aws:secretsmanager:\S+gone-AbCdEf failed 2 times/],
    ];

    for (const [node, r, why] of broken) {
      assert.notEqual(r.code, 0, `${node}: the boot must fail:\n${r.console}`);
      assert.match(r.console, why);
      assert.match(r.console, /^rig bootstrap: FAILED at line \d+|not starting rig-worker\.service/m);
      assert.doesNotMatch(r.console, /bootstrap: done/);
    }
    assert.ok(!fs.existsSync(unreadable.written('etc/systemd/system/rig-worker.service')), 'no unit for a worker that cannot load');

    // The console read (EC2 GetConsoleOutput through console.ts's consoleTail) fed what each console holds.
    // One campaign per broken node, one after another (they share the doubles' host lease); the node's
    // queue has no worker, so prepare fails after workerWaitSeconds (5).
    let route: Route = { dataQueue: '', console: '' };
    const control = await controlWorkers(() => route);
    try {
      for (const [i, [node, r, why]] of broken.entries()) {
        route = { dataQueue: awsDataQueue(`${CAMPAIGN}-broken-${i}`), console: `${node}: \n${consoleTail(r.console)}` };
        const handle = await control.start(`node-boot-broken-${i}`, 5);
        const summary = await handle.result().then(
          () => assert.fail(`${node}: the campaign must fail`),
          (err: unknown) => {
            assert.ok(err instanceof WorkflowFailedError, String(err));
            return (err.cause as { details?: CampaignResult[] }).details![0].steps.find((s) => s.step === 'prepare')?.summary ?? '';
          },
        );
        assert.match(summary, new RegExp(`^no worker took prepareRig from the task queue ${route.dataQueue} within 5 seconds: the rig's nodes did not start their workers \\(their bootstrap runs at first boot\\)\\. The nodes' serial consoles \\(EC2 GetConsoleOutput\\), last lines:\n${node}: \n`));
        assert.match(summary, why, summary);
      }
    } finally {
      await control.stop();
    }
  });

});

test('the sandbox is not this machine: nothing the boots wrote is outside their folders', () => {
  for (const p of ['/opt/rig', '/etc/rig', '/etc/systemd/system/rig-worker.service', '/var/log/rig-bootstrap.log', '/usr/bin/node-22', '/var/lib/rig-deadline']) assert.ok(!fs.existsSync(p), `${p} is on this machine`);
  assert.ok(fs.existsSync(path.join(root, 'load', 'up', 'opt', 'rig', 'app', 'bin', 'rig.cjs')));
});
