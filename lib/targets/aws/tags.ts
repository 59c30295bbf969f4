// The tags every resource of an AWS rig carries, in the one shape all of EC2, RDS, S3, IAM and Secrets
// Manager take ({Key, Value}): its name, its campaign, its kind, when it was made and when it may be
// reaped. find.ts reads them back; the reaper and the expiry re-tag key on them.
import { CAMPAIGN_TAG, CREATED_TAG, EXPIRES_TAG, RESOURCE_TAG, type RigResourceKind } from './names';

export interface RigTag {
  Key: string;
  Value: string;
}

export function rigTags(campaignId: string, kind: RigResourceKind, name: string, expiresAt: string, now: Date): RigTag[] {
  return [
    { Key: 'Name', Value: name },
    { Key: CAMPAIGN_TAG, Value: campaignId },
    { Key: RESOURCE_TAG, Value: kind },
    { Key: CREATED_TAG, Value: now.toISOString() },
    { Key: EXPIRES_TAG, Value: expiresAt },
  ];
}
