// Preflight: both node types are offered in the spec's zone (every load node is of the load node's type). A zone NAME (us-east-1a) maps to a
// different physical zone in each account; its zone ID (use1-az4) is the same for everyone, and
// offerings are published by zone ID. So the name is mapped with DescribeAvailabilityZones first, then
// DescribeInstanceTypeOfferings is asked with LocationType availability-zone-id (EC2 API reference,
// DescribeInstanceTypeOfferings: filters `location` and `instance-type`). A type not offered there is
// refused naming the account's zones that do offer it.
import { DescribeAvailabilityZonesCommand, DescribeInstanceTypeOfferingsCommand, type EC2Client, type _InstanceType } from '@aws-sdk/client-ec2';
import type { AwsSpec } from '../../protocol/aws-spec';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';

const ZONE = 'zone';
const OFFERED = 'instance-types';

/** The zone's ID in this account, with the verdict on the zone itself. */
export async function zoneIdOf(ec2: EC2Client, aws: AwsSpec): Promise<Verdict & { zoneId?: string }> {
  try {
    const r = await ec2.send(new DescribeAvailabilityZonesCommand({ ZoneNames: [aws.zone] }));
    const z = r.AvailabilityZones?.find((x) => x.ZoneName === aws.zone);
    if (!z?.ZoneId) return refuse(ZONE, `${aws.zone} is not a zone of ${aws.region} in this account`, `set aws.zone to a zone of ${aws.region} (aws ec2 describe-availability-zones)`);
    if (z.State && z.State !== 'available') return refuse(ZONE, `${aws.zone} (${z.ZoneId}) is ${z.State}`, 'set aws.zone to an available zone');
    return { ...pass(ZONE, `${aws.zone} is zone ID ${z.ZoneId} in this account`), zoneId: z.ZoneId };
  } catch (err) {
    // EC2 answers an unknown zone name with InvalidParameterValue.
    if (err instanceof Error && /InvalidParameterValue|InvalidAvailabilityZone/.test(err.name)) {
      return refuse(ZONE, `${aws.zone} is not a zone of ${aws.region} in this account (${err.message.slice(0, 200)})`, `set aws.zone to a zone of ${aws.region} (aws ec2 describe-availability-zones)`);
    }
    return couldNotLook(ZONE, 'ec2:DescribeAvailabilityZones', err);
  }
}

async function offeredIn(ec2: EC2Client, types: string[], zoneIds?: string[]): Promise<Array<{ type: string; zoneId: string }>> {
  const out: Array<{ type: string; zoneId: string }> = [];
  let token: string | undefined;
  do {
    const r = await ec2.send(
      new DescribeInstanceTypeOfferingsCommand({
        LocationType: 'availability-zone-id',
        Filters: [{ Name: 'instance-type', Values: types }, ...(zoneIds ? [{ Name: 'location', Values: zoneIds }] : [])],
        ...(token ? { NextToken: token } : {}),
      }),
    );
    for (const o of r.InstanceTypeOfferings ?? []) if (o.InstanceType && o.Location) out.push({ type: o.InstanceType, zoneId: o.Location });
    token = r.NextToken;
  } while (token);
  return out;
}

/** `loadNodes` (load.nodes, issue 37): every load node is of aws.load's type, in the same zone; said in the verdict. */
export async function checkInstanceTypes(ec2: EC2Client, aws: AwsSpec, zoneId: string, loadNodes = 1): Promise<Verdict> {
  const types = [...new Set([aws.app.instanceType, aws.load.instanceType])] as _InstanceType[];
  const forNodes = loadNodes > 1 ? ` (the app node and ${loadNodes} load nodes of ${aws.load.instanceType})` : '';
  try {
    const here = new Set((await offeredIn(ec2, types, [zoneId])).map((o) => o.type));
    const missing = types.filter((t) => !here.has(t));
    if (missing.length === 0) return pass(OFFERED, `${types.join(' and ')} offered in ${aws.zone} (${zoneId})${forNodes}`);
    // Where the missing ones are offered, by this account's zone names.
    const names = new Map(((await ec2.send(new DescribeAvailabilityZonesCommand({}))).AvailabilityZones ?? []).map((z) => [z.ZoneId ?? '', z.ZoneName ?? '']));
    const elsewhere = await offeredIn(ec2, missing);
    const where = missing.map((t) => `${t}: ${elsewhere.filter((o) => o.type === t).map((o) => names.get(o.zoneId) ?? o.zoneId).sort().join(', ') || `no zone of ${aws.region}`}`);
    const fields = missing.map((t) => (t === aws.app.instanceType && t === aws.load.instanceType ? 'aws.app/load.instanceType' : t === aws.app.instanceType ? 'aws.app.instanceType' : 'aws.load.instanceType'));
    return refuse(OFFERED, `${missing.join(' and ')} not offered in ${aws.zone} (${zoneId})${forNodes}; offered in ${where.join('; ')}`, `set ${fields.join(' and ')} to a type offered in ${aws.zone}, or aws.zone to a zone that offers it (the database must be orderable there too)`);
  } catch (err) {
    return couldNotLook(OFFERED, 'ec2:DescribeInstanceTypeOfferings', err);
  }
}
