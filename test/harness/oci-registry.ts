// A container registry on loopback, over real TLS, speaking the part of the OCI Distribution API a
// pull starts with (GET manifests, GET blobs) and Docker's token authentication: a 401 with a Bearer
// challenge, a token service that gives anonymous pull tokens for public repositories and refuses
// private ones, and a blob GET that redirects to another origin (as Docker Hub's and ghcr.io's go to a
// CDN). No registry binary can be installed here, so this is the closest real thing: real HTTPS with
// a test CA (lib/targets/local/test-ca.ts), real headers, real redirects. It records every request
// (path and whether it carried an Authorization header) for the tests to assert on.
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { makeClusterTls } from '../../lib/targets/local/test-ca';

export type RegistryImage =
  /** An image index (multi-platform); platforms as os/arch[/variant]; unknown/unknown entries are attestations. */
  | { kind: 'index'; platforms: string[]; docker?: boolean }
  /** One image manifest whose config blob names its platform. */
  | { kind: 'single'; platform: string };

export interface TestRegistry {
  /** host:port, as an image reference's first component. */
  host: string;
  /** A dispatcher that trusts the registry's test CA (RegistryOptions.dispatcher). */
  dispatcher: Agent;
  requests: Array<{ origin: string; path: string; authorized: boolean }>;
  close(): Promise<void>;
}

const INDEX = 'application/vnd.oci.image.index.v1+json';
const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const sha = (b: Buffer | string) => `sha256:${crypto.createHash('sha256').update(b).digest('hex')}`;

/**
 * `images`: repository:tag -> what it holds. `privateRepos`: repositories whose token the token service
 * refuses (401), as for a private image pulled with no credentials. `basicRepos`: repositories that
 * challenge with Basic, as ECR does.
 */
export async function startTestRegistry(images: Record<string, RegistryImage>, opts: { privateRepos?: string[]; basicRepos?: string[] } = {}): Promise<TestRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-registry-'));
  const tls = await makeClusterTls(dir, { label: 'registry' });
  const blobs = new Map<string, Buffer>();
  const requests: TestRegistry['requests'] = [];
  let port = 0;
  const server = https.createServer({ key: fs.readFileSync(tls.keyFile), cert: fs.readFileSync(tls.certFile) }, (req, res) => {
    const url = new URL(req.url ?? '/', `https://${req.headers.host}`);
    const auth = req.headers.authorization;
    requests.push({ origin: `https://${req.headers.host}`, path: url.pathname, authorized: Boolean(auth) });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    };
    if (url.pathname === '/token') {
      const repo = /^repository:(.+):pull$/.exec(url.searchParams.get('scope') ?? '')?.[1] ?? '';
      if (url.searchParams.get('service') !== 'rig-test-registry') return send(400, { errors: [{ code: 'UNSUPPORTED', message: 'unknown service' }] });
      if (opts.privateRepos?.includes(repo)) return send(401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] });
      return send(200, { token: `anon:${repo}` });
    }
    // The CDN a blob redirects to (another origin: localhost, not 127.0.0.1): it must see no token.
    const cdn = /^\/cdn\/(sha256:[0-9a-f]+)$/.exec(url.pathname);
    if (cdn) return blobs.has(cdn[1]) ? send(200, blobs.get(cdn[1])!.toString('utf8')) : send(404, '');
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    if (!m) return send(404, { errors: [{ code: 'NOT_FOUND' }] });
    const [, repo, what, ref] = m;
    if (opts.basicRepos?.includes(repo) && !auth) return send(401, { errors: [{ code: 'UNAUTHORIZED' }] }, { 'www-authenticate': `Basic realm="https://${req.headers.host}/"` });
    if (auth !== `Bearer anon:${repo}`) {
      return send(401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }, {
        'www-authenticate': `Bearer realm="https://127.0.0.1:${port}/token",service="rig-test-registry",scope="repository:${repo}:pull"`,
      });
    }
    if (what === 'blobs') {
      if (!blobs.has(ref)) return send(404, { errors: [{ code: 'BLOB_UNKNOWN' }] });
      res.writeHead(307, { location: `https://localhost:${port}/cdn/${ref}` });
      return res.end();
    }
    const image = images[`${repo}:${ref}`];
    if (!image) return send(404, { errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] });
    if (image.kind === 'index') {
      const type = image.docker ? DOCKER_LIST : INDEX;
      return send(200, {
        schemaVersion: 2,
        mediaType: type,
        manifests: image.platforms.map((p) => {
          const [osName, architecture, variant] = p.split('/');
          return { mediaType: MANIFEST, digest: sha(p), size: 500, platform: { os: osName, architecture, ...(variant ? { variant } : {}) } };
        }),
      }, { 'content-type': type });
    }
    const [osName, architecture] = image.platform.split('/');
    const config = Buffer.from(JSON.stringify({ architecture, os: osName, config: {}, rootfs: { type: 'layers', diff_ids: [] } }));
    blobs.set(sha(config), config);
    return send(200, { schemaVersion: 2, mediaType: MANIFEST, config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length }, layers: [] }, { 'content-type': MANIFEST });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const dispatcher = new Agent({ connect: { ca: fs.readFileSync(tls.caFile) } });
  return {
    host: `127.0.0.1:${port}`,
    dispatcher,
    requests,
    async close() {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
