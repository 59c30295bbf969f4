// An image's platform is checked against the app node's before anything is billed (issue 23): the
// preflight reads each image the app node will run from its registry, here a real HTTPS registry on
// loopback (test/harness/oci-registry.ts: a Bearer challenge, an anonymous token, a blob redirected to
// another origin). Refused: an amd64-only index or image for a Graviton node, a missing tag, a
// repository the registry will not show without credentials; passed: an index with an arm64 build.
// Then through provisionAws against a real moto 5.2.5: the refusal comes before any create.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DescribeDBInstancesCommand, type DBInstance } from '@aws-sdk/client-rds';
import { campaignImages } from '../../../lib/protocol/service-spec';
import { parseImageReference } from '../../../lib/targets/aws/image-reference';
import { bearerChallenge, imagePlatforms } from '../../../lib/targets/aws/image-platforms';
import { checkImagePlatform } from '../../../lib/targets/aws/preflight-image';
import { findRigResources } from '../../../lib/targets/aws/find';
import { provisionAws } from '../../../lib/targets/aws/provision';
import { PreflightRefusal } from '../../../lib/targets/preflight-refusal';
import { exampleAws, exampleSpec as spec, useMoto } from '../../harness/aws-env';
import { startTestRegistry, type TestRegistry } from '../../harness/oci-registry';

test('image references are split as Docker normalizes them', () => {
  assert.deepEqual(parseImageReference('postgres'), { image: 'postgres', host: 'registry-1.docker.io', repository: 'library/postgres', reference: 'latest' });
  assert.deepEqual(parseImageReference('me/hc:1.4'), { image: 'me/hc:1.4', host: 'registry-1.docker.io', repository: 'me/hc', reference: '1.4' });
  assert.deepEqual(parseImageReference('docker.io/me/hc:1'), { image: 'docker.io/me/hc:1', host: 'registry-1.docker.io', repository: 'me/hc', reference: '1' });
  assert.deepEqual(parseImageReference('ghcr.io/me/team/hc'), { image: 'ghcr.io/me/team/hc', host: 'ghcr.io', repository: 'me/team/hc', reference: 'latest' });
  assert.deepEqual(parseImageReference('localhost:5000/hc:2'), { image: 'localhost:5000/hc:2', host: 'localhost:5000', repository: 'hc', reference: '2' });
  const digest = `sha256:${'a'.repeat(64)}`;
  assert.equal(parseImageReference(`123456789012.dkr.ecr.us-east-1.amazonaws.com/hc:1@${digest}`).reference, digest, 'a digest wins over a tag');
  assert.throws(() => parseImageReference('Me/HC'), /repository name Docker refuses/);
  assert.throws(() => parseImageReference('my image'), /not an image reference/);
});

test("the images a campaign runs: the base service's and each variant's, once each, with the field that names it", () => {
  const run = (image: string) => ({ image, readyTimeoutSeconds: 60 });
  assert.deepEqual(
    campaignImages({ run: run('ghcr.io/me/hc:1') }, [
      { field: 'variants.control.service.run', run: run('ghcr.io/me/hc:1') },
      { field: 'variants.treatments[0].service.run', run: run('ghcr.io/me/hc:2') },
    ]),
    [{ field: 'service.run.image', image: 'ghcr.io/me/hc:1' }, { field: 'variants.treatments[0].service.run.image', image: 'ghcr.io/me/hc:2' }],
  );
  // Only a variant brings an image: the app node still needs Docker, and the image is still checked.
  assert.deepEqual(campaignImages({}, [{ field: 'variants.treatments[0].service.run', run: run('me/hc:2') }]), [{ field: 'variants.treatments[0].service.run.image', image: 'me/hc:2' }]);
  assert.deepEqual(campaignImages({ run: { command: ['node', 'main.js'], readyTimeoutSeconds: 60 } }, []), []);
});

test("a Bearer challenge's parameters; another scheme is none", () => {
  assert.deepEqual(bearerChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/postgres:pull"'), {
    realm: 'https://auth.docker.io/token',
    service: 'registry.docker.io',
    scope: 'repository:library/postgres:pull',
  });
  assert.equal(bearerChallenge('Basic realm="https://123.dkr.ecr.us-east-1.amazonaws.com/"'), undefined);
  assert.equal(bearerChallenge(null), undefined);
});

let registry: TestRegistry;
before(async () => {
  registry = await startTestRegistry(
    {
      'me/multi:1': { kind: 'index', platforms: ['linux/amd64', 'linux/arm64/v8', 'unknown/unknown'] },
      'me/amd-only:1': { kind: 'index', platforms: ['linux/amd64', 'unknown/unknown'], docker: true },
      'me/single-amd:1': { kind: 'single', platform: 'linux/amd64' },
      'me/single-arm:1': { kind: 'single', platform: 'linux/arm64' },
      'me/secret:1': { kind: 'index', platforms: ['linux/arm64'] },
      'me/ecr:1': { kind: 'index', platforms: ['linux/arm64'] },
    },
    { privateRepos: ['me/secret'], basicRepos: ['me/ecr'] },
  );
});
after(async () => registry?.close());

const opts = () => ({ dispatcher: registry.dispatcher });
const img = (repoTag: string, field = 'service.run.image') => ({ field, image: `${registry.host}/${repoTag}` });

test('an index is read with an anonymous token; its attestation entries are not platforms', async () => {
  const answer = await imagePlatforms(parseImageReference(`${registry.host}/me/multi:1`), opts());
  assert.deepEqual(answer, { kind: 'platforms', platforms: ['linux/amd64', 'linux/arm64/v8'], from: 'index' });
  const v = await checkImagePlatform(img('me/multi:1'), 'c7g.2xlarge', opts());
  assert.equal(v.ok, true, v.line);
  assert.match(v.line, /^service\.run\.image 127\.0\.0\.1:\d+\/me\/multi:1 has linux\/amd64, linux\/arm64\/v8; the app node \(c7g\.2xlarge\) is linux\/arm64$/);
  // The first GET was challenged, the token asked for, the second GET carried it (each read does the same).
  const paths = registry.requests.filter((r) => r.path.includes('me/multi') || r.path === '/token').map((r) => [r.path, r.authorized]);
  assert.deepEqual(paths.slice(0, 3), [['/v2/me/multi/manifests/1', false], ['/token', false], ['/v2/me/multi/manifests/1', true]]);
});

test('an amd64-only image is refused for a Graviton node, naming the field, its platforms and the fix; it passes an x86 node', async () => {
  const v = await checkImagePlatform(img('me/amd-only:1', 'variants.treatments[0].service.run.image'), 'c7g.2xlarge', opts());
  assert.equal(v.ok, false);
  assert.match(v.line, /^variants\.treatments\[0\]\.service\.run\.image 127\.0\.0\.1:\d+\/me\/amd-only:1 has linux\/amd64 \(its index\), no linux\/arm64 build; the app node \(c7g\.2xlarge\) is linux\/arm64$/);
  assert.match(v.fix ?? '', /docker buildx build --platform linux\/arm64,linux\/amd64 --push\), or set aws\.app\.instanceType/);
  assert.equal((await checkImagePlatform(img('me/amd-only:1'), 'c7i.2xlarge', opts())).ok, true);
});

test("a single-platform image is judged by its config blob, fetched through a redirect to another origin that never sees the token", async () => {
  const v = await checkImagePlatform(img('me/single-amd:1'), 'c7g.2xlarge', opts());
  assert.equal(v.ok, false);
  assert.match(v.line, /has linux\/amd64 \(its image's config\), no linux\/arm64 build/);
  assert.equal((await checkImagePlatform(img('me/single-arm:1'), 'c7g.2xlarge', opts())).ok, true);
  const blob = registry.requests.filter((r) => r.path.startsWith('/v2/me/single-arm/blobs/') || r.path.startsWith('/cdn/'));
  assert.ok(blob.some((r) => r.path.startsWith('/v2/me/single-arm/blobs/') && r.authorized), 'the blob GET carried the token');
  const cdn = blob.filter((r) => r.path.startsWith('/cdn/'));
  assert.ok(cdn.length >= 1 && cdn.every((r) => r.origin.startsWith('https://localhost:') && !r.authorized), JSON.stringify(cdn));
});

test('a missing tag, a private repository and a Basic challenge are each refused saying why', async () => {
  const missing = await checkImagePlatform(img('me/multi:2'), 'c7g.2xlarge', opts());
  assert.equal(missing.ok, false);
  assert.match(missing.line, /has no me\/multi:2 \(HTTP 404: .*MANIFEST_UNKNOWN/);
  assert.match(missing.fix ?? '', /push the image, or fix service\.run\.image/);
  const secret = await checkImagePlatform(img('me/secret:1'), 'c7g.2xlarge', opts());
  assert.equal(secret.ok, false);
  assert.match(secret.line, /gives no anonymous token for repository:me\/secret:pull \(HTTP 401\); the app node pulls with no credentials$/);
  const ecr = await checkImagePlatform(img('me/ecr:1'), 'c7g.2xlarge', opts());
  assert.match(ecr.line, /asks for credentials \(Basic realm=/);
  // A registry that does not answer: refused, not passed (the preflight passes nothing it could not see).
  const down = await checkImagePlatform({ field: 'service.run.image', image: '127.0.0.1:1/me/hc:1' }, 'c7g.2xlarge', { ...opts(), timeoutMs: 5000 });
  assert.equal(down.ok, false);
  assert.match(down.line, /could not read its registry \(127\.0\.0\.1:1: /);
});

const env = useMoto({ prefix: 'rig-aws-image-' });

test("provisioning refuses an image with no build for the app node before anything is made", async () => {
  const lines: string[] = [];
  const expiresAt = new Date(Date.now() + 3600_000).toISOString();
  const params = { db: { ...spec.database }, service: { run: { image: `${registry.host}/me/amd-only:1`, readyTimeoutSeconds: 60 } }, aws: { spec: exampleAws, expiresAt } };
  await assert.rejects(provisionAws('image-refused', params as never, (l) => lines.push(l), { registry: opts() }), (err: unknown) => {
    assert.ok(err instanceof PreflightRefusal, String(err));
    assert.deepEqual(err.failed, ['image-platform']);
    assert.match(err.message, /image-platform: service\.run\.image .*me\/amd-only:1 has linux\/amd64 \(its index\), no linux\/arm64 build/);
    return true;
  });
  assert.ok(lines.some((l) => /^preflight image-platform: REFUSED, service\.run\.image /.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => l.startsWith('preflight engine-version: ok')), 'the AWS checks ran too');
  await env.withClients(async (c) => {
    const dbs: DBInstance[] = (await c.rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [];
    assert.deepEqual(dbs, [], 'no DB instance was created');
    assert.deepEqual(await findRigResources(c, 'image-refused'), [], 'nothing of the rig was made');
  });
});
