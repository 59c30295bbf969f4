// The expiry stamp on a node: rig:expires (and rig:created when the launch was this attempt's), put by
// CreateTags right after RunInstances rather than in it, so that RunInstances' parameters, and with
// them its ClientToken's meaning, stay the same across attempts (provision.ts). EC2 is eventually
// consistent: an instance RunInstances just returned can be unknown to CreateTags for a while
// (InvalidInstanceID.NotFound), and a node without rig:expires is one the reaper passes over while
// its campaign runs, so that error, and only that one, is retried (wait.ts eventually).
import { CreateTagsCommand } from '@aws-sdk/client-ec2';
import type { ProgressFn } from '../target';
import { CREATED_TAG, EXPIRES_TAG } from './names';
import { eventually, type EventuallyOptions } from './wait';

/** The error EC2 answers for an instance it does not know yet (or any more). */
export const INSTANCE_NOT_KNOWN_YET = 'InvalidInstanceID.NotFound';

type Ec2Send = { send(cmd: CreateTagsCommand): Promise<unknown> };

export async function stampExpiry(ec2: Ec2Send, instanceId: string, stamp: { expiresAt: string; createdAt?: string }, onProgress: ProgressFn = () => {}, retry: EventuallyOptions = {}): Promise<void> {
  const tags = [{ Key: EXPIRES_TAG, Value: stamp.expiresAt }, ...(stamp.createdAt ? [{ Key: CREATED_TAG, Value: stamp.createdAt }] : [])];
  await eventually(`stamping ${instanceId} with ${EXPIRES_TAG}`, () => ec2.send(new CreateTagsCommand({ Resources: [instanceId], Tags: tags })), [INSTANCE_NOT_KNOWN_YET], onProgress, retry);
}
