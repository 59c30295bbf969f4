// The campaign's artifacts bucket: where the package the nodes run waits for them. One per campaign,
// so teardown removes it whole. Bucket names are global across accounts, so the name carries the
// account id (names.ts); S3's CreateBucket takes no tags, so the bucket is tagged right after, and a
// retry finds it by its derived name (BucketAlreadyOwnedByYou) and tags it again. New buckets block
// public access by default; nothing here loosens that.
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  HeadBucketCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  type BucketLocationConstraint,
} from '@aws-sdk/client-s3';
import type { ProgressFn } from '../target';
import type { AwsClients } from './clients';
import { isNamed } from './errors';
import type { RigTag } from './tags';
import { waitFor } from './wait';

export async function ensureBucket(c: AwsClients, name: string, tags: RigTag[], onProgress: ProgressFn = () => {}): Promise<void> {
  try {
    onProgress(`creating S3 bucket ${name}`);
    await c.s3.send(
      new CreateBucketCommand({
        Bucket: name,
        // us-east-1 is the one region that refuses a LocationConstraint naming itself.
        ...(c.region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: c.region as BucketLocationConstraint } }),
      }),
    );
  } catch (err) {
    if (isNamed(err, 'BucketAlreadyExists')) throw new Error(`S3 bucket name ${name} is taken by another account: the name is derived from the campaign and account id, so this should not happen; start the campaign under another id`);
    if (!isNamed(err, 'BucketAlreadyOwnedByYou')) throw err;
  }
  await c.s3.send(new PutBucketTaggingCommand({ Bucket: name, Tagging: { TagSet: tags } }));
}

/** Deletes every object (every version) and then the bucket, and waits until S3 says it is gone. */
export async function removeBucket(c: AwsClients, name: string, onProgress: ProgressFn = () => {}): Promise<void> {
  try {
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    for (;;) {
      const page = await c.s3.send(new ListObjectVersionsCommand({ Bucket: name, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
      const objects = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => ({ Key: v.Key!, VersionId: v.VersionId ?? undefined }));
      if (objects.length) {
        onProgress(`deleting ${objects.length} object(s) in s3://${name}`);
        const r = await c.s3.send(new DeleteObjectsCommand({ Bucket: name, Delete: { Objects: objects, Quiet: true } }));
        if (r.Errors?.length) throw new Error(`deleting objects in s3://${name}: ${r.Errors.map((e) => `${e.Key}: ${e.Code} ${e.Message}`).join('; ')}`);
      }
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      versionMarker = page.NextVersionIdMarker;
    }
    onProgress(`deleting S3 bucket ${name}`);
    await c.s3.send(new DeleteBucketCommand({ Bucket: name }));
  } catch (err) {
    if (!isNamed(err, 'NoSuchBucket', 'NotFound')) throw err;
  }
  await waitFor(
    `S3 bucket ${name} deleted`,
    async () => {
      try {
        await c.s3.send(new HeadBucketCommand({ Bucket: name }));
        return undefined;
      } catch (err) {
        if (isNamed(err, 'NotFound', 'NoSuchBucket')) return true;
        throw err;
      }
    },
    { timeoutMs: 5 * 60_000, onProgress },
  );
}
