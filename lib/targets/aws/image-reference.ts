// A container image reference (`service.run.image`) split the way Docker normalizes it
// (distribution/reference, "docker.io" as the default domain): the registry to ask, the repository
// and the tag or digest. Pure. Used by the preflight's platform check (image-platforms.ts), which reads
// the registry before anything is billed instead of learning on the app node that the image has no
// build for it.
//
// The rules: a first path component with a '.' or a ':', or `localhost`, is a registry host; otherwise
// the image is on Docker Hub, whose API host is registry-1.docker.io, and a name without a '/' is under
// `library/`. `@sha256:...` pins a digest (a tag before it is then ignored, as Docker does); otherwise the
// tag after the last ':' of the last component, `latest` when there is none.

export interface ImageReference {
  /** As the spec gave it. */
  image: string;
  /** The registry's API host (and port): https://<host>/v2/... */
  host: string;
  repository: string;
  /** A tag or a digest (sha256:...). */
  reference: string;
}

const DOCKER_HUB_API = 'registry-1.docker.io';

export function parseImageReference(image: string): ImageReference {
  const trimmed = image.trim();
  if (!trimmed || /\s/.test(trimmed)) throw new Error(`service.run.image: "${image}" is not an image reference (no spaces; e.g. ghcr.io/me/hardcount:1.4)`);
  let rest = trimmed;
  let reference: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/.test(reference)) throw new Error(`service.run.image: "${image}" has a digest that is not one (sha256:<hex>)`);
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  const hasHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = hasHost ? first : DOCKER_HUB_API;
  let path = hasHost ? rest.slice(slash + 1) : rest;
  const lastSlash = path.lastIndexOf('/');
  const colon = path.lastIndexOf(':');
  if (colon > lastSlash) {
    if (reference === undefined) reference = path.slice(colon + 1);
    path = path.slice(0, colon);
  }
  if (!hasHost && !path.includes('/')) path = `library/${path}`;
  if (!path || !/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path)) {
    throw new Error(`service.run.image: "${image}" has a repository name Docker refuses ("${path}": lowercase letters, digits and . _ - separated by /)`);
  }
  return { image: trimmed, host: host === 'docker.io' || host === 'index.docker.io' ? DOCKER_HUB_API : host, repository: path, reference: reference ?? 'latest' };
}

/** Docker's platform for an EC2 architecture (DescribeInstanceTypes' names). */
export function dockerPlatformOf(arch: 'arm64' | 'x86_64'): string {
  return arch === 'arm64' ? 'linux/arm64' : 'linux/amd64';
}
