// The user's build on an AWS app node (issue 14): `service.run.image` under Docker, which the node's
// user data installs when the spec names an image. The environment is the contract of docs/your-service.md,
// "The service contract" (DATABASE_URL and HC_DATABASE_URL, HOST/PORT and their HC_* twins, the settings);
// it goes in through an --env-file of mode 0600, never argv, because the app role's password is in
// DATABASE_URL and any user on the node can read another process's argv.
// Ready when http://127.0.0.1:SERVICE_PORT/healthz answers 200, as for a local command. Safe to run
// twice: a container of this campaign that answers is kept; one that does not is removed and run again.
//
// No test here reaches this file's Docker calls (the emulated app node has no Docker): dockerRunArgs,
// dockerPlatform and platformRefusal are checked alone, the rest is to be checked on a real node.
import fs from 'node:fs';
import path from 'node:path';
import { connectionParts } from '../../pg/connection';
import { settingsEnv, type ServiceRunSpec } from '../../protocol/service-spec';
import { runProgram } from '../../tools/run';
import { healthy } from '../local/service-process';
import { ServiceRefusal } from '../service-refusal';
import type { ProgressFn, ServiceParameters } from '../target';

/** The container's name: one per campaign on its app node. */
export function containerName(campaignId: string): string {
  return `rig-service-${campaignId.replace(/[^A-Za-z0-9_.-]/g, '-')}`.slice(0, 120);
}

/**
 * `docker run` for the image. Without a fixed port the container shares the node's network and is told
 * PORT=servicePort; with one (`run.port`, an image that always listens there) the node's servicePort is
 * published onto it. Pure.
 */
export function dockerRunArgs(o: { name: string; image: string; envFile: string; servicePort: number; imagePort?: number; caFile?: string }): string[] {
  const network = o.imagePort === undefined ? ['--network', 'host'] : ['--publish', `${o.servicePort}:${o.imagePort}`];
  // DATABASE_URL's sslrootcert names a file on the node: the same path, read-only, inside the container.
  const ca = o.caFile ? ['--volume', `${o.caFile}:${o.caFile}:ro`] : [];
  return ['run', '--detach', '--name', o.name, '--restart', 'no', '--env-file', o.envFile, ...network, ...ca, o.image];
}

/** Docker's platform for this node's CPU (Node's process.arch): the app node is arm64 on Graviton types. */
export function dockerPlatform(arch: string = process.arch): string {
  return arch === 'arm64' ? 'linux/arm64' : arch === 'x64' ? 'linux/amd64' : `linux/${arch}`;
}

/**
 * The refusal for an image that has no build for the node's platform, from what `docker pull
 * --platform` said or the platform the pulled image reports (`docker image inspect`); undefined when
 * neither says the platform is wrong. An amd64-only image on an arm64 node would otherwise fail at run
 * with "exec format error" and nothing saying why.
 */
export function platformRefusal(image: string, platform: string, said: { pullError?: string; pulled?: string }): ServiceRefusal | undefined {
  const wrong = said.pullError !== undefined ? /no matching manifest|does not match the specified platform/i.test(said.pullError) : said.pulled !== undefined && said.pulled !== platform;
  if (!wrong) return undefined;
  const has = said.pulled ? ` (it is ${said.pulled})` : '';
  return new ServiceRefusal(
    `service.run.image: ${image} has no ${platform} build${has}, and the app node is ${platform}: build and push it for ${platform} (docker buildx build --platform ${platform},linux/amd64 --push), or set aws.app.instanceType to a type of the image's platform`,
  );
}

/** The env file's lines (KEY=value; Docker reads the rest of the line as the value, so a newline cannot be carried). */
export function envFileText(env: Record<string, string>): string {
  for (const [k, v] of Object.entries(env)) if (/[\r\n]/.test(v)) throw new ServiceRefusal(`service.env.${k}: a value with a line break cannot be passed to a container`);
  return Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n';
}

async function docker(args: string[]): Promise<string> {
  return (await runProgram('docker', args, { timeoutMs: 15 * 60_000 })).stdout.trim();
}

/** Runs the spec's image on this node; returns once its /healthz answers 200 on the service port. */
export async function startAwsContainer(
  o: { campaignId: string; run: ServiceRunSpec & { image: string }; service: ServiceParameters; databaseUrl: string; servicePort: number; dir: string },
  onProgress: ProgressFn,
): Promise<void> {
  const name = containerName(o.campaignId);
  try {
    await docker(['version', '--format', '{{.Server.Version}}']);
  } catch (err) {
    throw new ServiceRefusal(`service.run.image: Docker does not answer on the app node (${(err as Error).message.slice(0, 200)}); its user data installs it when the spec names an image`);
  }
  const url = `http://127.0.0.1:${o.servicePort}`;
  const running = await docker(['ps', '--quiet', '--filter', `name=^${name}$`]).catch(() => '');
  if (running && (await healthy(url))) return;
  await docker(['rm', '--force', name]).catch(() => '');
  const listenPort = o.run.port ?? o.servicePort;
  const env = {
    ...settingsEnv(o.service),
    HOST: '0.0.0.0',
    PORT: String(listenPort),
    HC_HOST: '0.0.0.0',
    HC_PORT: String(listenPort),
    DATABASE_URL: o.databaseUrl,
    HC_DATABASE_URL: o.databaseUrl,
  };
  const envFile = path.join(o.dir, 'service.env');
  fs.writeFileSync(envFile, envFileText(env), { mode: 0o600 });
  try {
    // The image's platform is the node's, checked before anything runs (issue 23): the preflight read
    // its registry before anything was billed (preflight-image.ts); this is the node's own check, for
    // a tag that moved since.
    const platform = dockerPlatform();
    onProgress(`pulling ${o.run.image} for ${platform}`);
    try {
      await docker(['pull', '--platform', platform, o.run.image]);
    } catch (err) {
      throw platformRefusal(o.run.image, platform, { pullError: (err as Error).message }) ?? err;
    }
    const pulled = await docker(['image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', o.run.image]).catch(() => undefined);
    const refused = pulled ? platformRefusal(o.run.image, platform, { pulled }) : undefined;
    if (refused) throw refused;
    onProgress(`starting ${o.run.image} as ${name}`);
    const caFile = connectionParts(o.databaseUrl).sslrootcert;
    await docker(dockerRunArgs({ name, image: o.run.image, envFile, servicePort: o.servicePort, ...(o.run.port !== undefined ? { imagePort: o.run.port } : {}), ...(caFile && caFile !== 'system' ? { caFile } : {}) }));
  } finally {
    // Docker has read it: the password does not stay on disk.
    fs.rmSync(envFile, { force: true });
  }
  const deadline = Date.now() + o.run.readyTimeoutSeconds * 1000;
  while (Date.now() < deadline) {
    if (await healthy(url)) return;
    const state = await docker(['inspect', '--format', '{{.State.Status}}', name]).catch(() => 'gone');
    if (state !== 'running') {
      const logs = await docker(['logs', '--tail', '30', name]).catch(() => '(no logs)');
      throw new Error(`the container ${name} (${o.run.image}) stopped during start-up (${state}); its last lines:\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the container ${name} (${o.run.image}) did not answer ${url}/healthz with 200 within ${o.run.readyTimeoutSeconds} s`);
}
