// The platforms an image has, read from its registry over the OCI Distribution API, before anything
// is billed: the app node pulls `service.run.image` only after provisioning, and an amd64-only image on
// a Graviton node would otherwise be found out there (app-container.ts refuses it then, too late to
// save the money).
//
// What it asks (OCI Distribution Spec v1.1, "Pull"; Docker's token authentication spec):
// - GET https://<host>/v2/<repository>/manifests/<reference>, accepting an image index or manifest
//   list and a single image manifest, OCI's and Docker's media types both;
// - a 401 with `WWW-Authenticate: Bearer realm=...,service=...,scope=...`: an anonymous token from the
//   realm, then the same GET with it (Docker Hub, ghcr.io and most registries serve public images so);
// - an index: its entries' platform.os/architecture (entries of os "unknown" are attestations, not
//   images); a single manifest: its config blob's os/architecture (the blob may redirect to a CDN;
//   fetch drops the Authorization header on a cross-origin redirect, as the Fetch standard says).
// The app node pulls with no credentials (its user data logs in nowhere), so an image the registry
// will not show anonymously could not be pulled there either: that is said as such.
import { fetch, type Dispatcher } from 'undici';
import type { ImageReference } from './image-reference';

export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export type PlatformsAnswer =
  | { kind: 'platforms'; platforms: string[]; from: 'index' | 'config' }
  | { kind: 'not-found'; status: number; detail: string }
  | { kind: 'needs-credentials'; detail: string }
  | { kind: 'could-not-read'; detail: string };

export interface RegistryOptions {
  /** The HTTP client's dispatcher (tests: one that trusts their registry's CA). Default: undici's global one. */
  dispatcher?: Dispatcher;
  /** Each request's bound. */
  timeoutMs?: number;
}

/** The parameters of a `WWW-Authenticate: Bearer k="v",...` challenge, or undefined for another scheme. */
export function bearerChallenge(header: string | null): { realm: string; service?: string; scope?: string } | undefined {
  if (!header || !/^Bearer\s/i.test(header)) return undefined;
  const params: Record<string, string> = {};
  for (const m of header.slice(header.indexOf(' ') + 1).matchAll(/([A-Za-z_]+)="([^"]*)"/g)) params[m[1].toLowerCase()] = m[2];
  if (!params.realm) return undefined;
  return { realm: params.realm, ...(params.service ? { service: params.service } : {}), ...(params.scope ? { scope: params.scope } : {}) };
}

const platformOf = (p: { os?: string; architecture?: string; variant?: string }) => `${p.os ?? '?'}/${p.architecture ?? '?'}${p.variant ? `/${p.variant}` : ''}`;

export async function imagePlatforms(ref: ImageReference, opts: RegistryOptions = {}): Promise<PlatformsAnswer> {
  const base = `https://${ref.host}/v2/${ref.repository}`;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let token: string | undefined;
  const get = async (url: string, accept: string) => {
    const headers: Record<string, string> = { accept, 'user-agent': 'rig-preflight' };
    if (token) headers.authorization = `Bearer ${token}`;
    return fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}) });
  };
  /** GET with one anonymous-token round on a Bearer challenge. */
  const read = async (url: string, accept: string): Promise<{ ok: true; res: Awaited<ReturnType<typeof fetch>> } | { ok: false; answer: PlatformsAnswer }> => {
    let res = await get(url, accept);
    if (res.status === 401 && !token) {
      const challenge = bearerChallenge(res.headers.get('www-authenticate'));
      await res.body?.cancel();
      if (!challenge) return { ok: false, answer: { kind: 'needs-credentials', detail: `${ref.host} asks for credentials (${res.headers.get('www-authenticate') ?? 'no challenge'})` } };
      const t = new URL(challenge.realm);
      if (challenge.service) t.searchParams.set('service', challenge.service);
      t.searchParams.set('scope', challenge.scope ?? `repository:${ref.repository}:pull`);
      const tr = await fetch(t, { headers: { 'user-agent': 'rig-preflight' }, signal: AbortSignal.timeout(timeoutMs), ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}) });
      if (tr.status === 401 || tr.status === 403) {
        await tr.body?.cancel();
        return { ok: false, answer: { kind: 'needs-credentials', detail: `${t.origin} gives no anonymous token for repository:${ref.repository}:pull (HTTP ${tr.status})` } };
      }
      if (!tr.ok) {
        await tr.body?.cancel();
        return { ok: false, answer: { kind: 'could-not-read', detail: `the token service ${t.origin} answered HTTP ${tr.status}` } };
      }
      const body = (await tr.json()) as { token?: string; access_token?: string };
      token = body.token ?? body.access_token;
      if (!token) return { ok: false, answer: { kind: 'could-not-read', detail: `the token service ${t.origin} gave no token` } };
      res = await get(url, accept);
    }
    if (res.status === 401 || res.status === 403) {
      const text = (await res.text()).slice(0, 200);
      return { ok: false, answer: { kind: 'needs-credentials', detail: `${ref.host} refuses an anonymous pull of ${ref.repository} (HTTP ${res.status}${text ? `: ${text}` : ''})` } };
    }
    if (res.status === 404) return { ok: false, answer: { kind: 'not-found', status: 404, detail: (await res.text()).slice(0, 200) } };
    if (!res.ok) {
      await res.body?.cancel();
      return { ok: false, answer: { kind: 'could-not-read', detail: `${url} answered HTTP ${res.status}` } };
    }
    return { ok: true, res };
  };

  try {
    const m = await read(`${base}/manifests/${ref.reference}`, MANIFEST_ACCEPT);
    if (!m.ok) return m.answer;
    const type = (m.res.headers.get('content-type') ?? '').split(';')[0].trim();
    const manifest = (await m.res.json()) as {
      mediaType?: string;
      manifests?: Array<{ platform?: { os?: string; architecture?: string; variant?: string } }>;
      config?: { digest?: string };
      architecture?: string;
    };
    if (Array.isArray(manifest.manifests)) {
      const platforms = manifest.manifests.map((e) => e.platform).filter((p): p is NonNullable<typeof p> => Boolean(p) && p!.os !== 'unknown').map(platformOf);
      return { kind: 'platforms', platforms: [...new Set(platforms)], from: 'index' };
    }
    // Docker's schema 1 carries the architecture itself (and is Linux only).
    if (type === 'application/vnd.docker.distribution.manifest.v1+json' || type === 'application/vnd.docker.distribution.manifest.v1+prettyjws') {
      return { kind: 'platforms', platforms: [`linux/${manifest.architecture ?? '?'}`], from: 'config' };
    }
    const digest = manifest.config?.digest;
    if (!digest) return { kind: 'could-not-read', detail: `the manifest of ${ref.image} (${type || manifest.mediaType || 'no media type'}) names no config blob` };
    const c = await read(`${base}/blobs/${digest}`, 'application/vnd.oci.image.config.v1+json, application/vnd.docker.container.image.v1+json, application/json');
    if (!c.ok) return c.answer;
    const config = (await c.res.json()) as { os?: string; architecture?: string; variant?: string };
    return { kind: 'platforms', platforms: [platformOf(config)], from: 'config' };
  } catch (err) {
    const e = err as Error & { cause?: Error };
    return { kind: 'could-not-read', detail: `${ref.host}: ${e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : `${e.message}${e.cause ? ` (${e.cause.message})` : ''}`}` };
  }
}

/** Whether `platforms` (os/arch[/variant]) has a build Docker would pull for `platform` (os/arch). */
export function hasPlatform(platforms: readonly string[], platform: string): boolean {
  return platforms.some((p) => p === platform || p.startsWith(`${platform}/`));
}
