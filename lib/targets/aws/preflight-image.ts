// Preflight: every image the campaign will run on the app node (service.run.image and each variant's)
// has a build for the node's platform, read from its registry (image-platforms.ts) before anything is
// made. One verdict per image, each naming its spec field.
import { hasPlatform, imagePlatforms, type RegistryOptions } from './image-platforms';
import { dockerPlatformOf, parseImageReference } from './image-reference';
import { architectureOf } from './instance-architecture';
import { pass, refuse, type Verdict } from './preflight-verdict';

export interface CampaignImage {
  /** The spec field that names it (service.run.image, variants.treatments[0].service.run.image). */
  field: string;
  image: string;
}

export const IMAGE_CHECK = 'image-platform';

export async function checkImagePlatform(img: CampaignImage, appInstanceType: string, opts: RegistryOptions = {}): Promise<Verdict> {
  const platform = dockerPlatformOf(architectureOf(appInstanceType));
  const node = `the app node (${appInstanceType}) is ${platform}`;
  let ref;
  try {
    ref = parseImageReference(img.image);
  } catch (err) {
    return refuse(IMAGE_CHECK, `${img.field}: ${(err as Error).message.replace(/^service\.run\.image: /, '')}`, `fix ${img.field}`);
  }
  const answer = await imagePlatforms(ref, opts);
  switch (answer.kind) {
    case 'platforms':
      if (hasPlatform(answer.platforms, platform)) return pass(IMAGE_CHECK, `${img.field} ${img.image} has ${answer.platforms.join(', ')}; ${node}`);
      return refuse(
        IMAGE_CHECK,
        `${img.field} ${img.image} has ${answer.platforms.join(', ') || 'no platform'} (its ${answer.from === 'index' ? 'index' : "image's config"}), no ${platform} build; ${node}`,
        `build and push it for ${platform} (docker buildx build --platform ${platform},linux/amd64 --push), or set aws.app.instanceType to a type of the image's platform`,
      );
    case 'not-found':
      return refuse(IMAGE_CHECK, `${img.field} ${img.image}: ${ref.host} has no ${ref.repository}:${ref.reference} (HTTP ${answer.status}${answer.detail ? `: ${answer.detail.replace(/\s+/g, ' ')}` : ''})`, `push the image, or fix ${img.field}`);
    case 'needs-credentials':
      return refuse(IMAGE_CHECK, `${img.field} ${img.image}: ${answer.detail}; the app node pulls with no credentials`, `make the image pullable without credentials (a public repository), or fix ${img.field}`);
    case 'could-not-read':
      return refuse(IMAGE_CHECK, `${img.field} ${img.image}: could not read its registry (${answer.detail})`, `make ${ref.host} answer from this host (network, proxy), then start again`);
  }
}
