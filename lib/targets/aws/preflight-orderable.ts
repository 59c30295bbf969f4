// Preflight: the DB instance class can be ordered for this engine version with gp3 storage in the
// spec's zone (DescribeOrderableDBInstanceOptions; RDS API reference, OrderableDBInstanceOption: each
// option names its StorageType and the AvailabilityZones where it is offered, and Min/MaxStorageSize).
// A class offered in the region but not in the zone is the usual failure: the fix names the zones that have it.
import { DescribeOrderableDBInstanceOptionsCommand, type OrderableDBInstanceOption, type RDSClient } from '@aws-sdk/client-rds';
import type { AwsSpec } from '../../protocol/aws-spec';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';

const CHECK = 'db-instance-class';

async function options(rds: RDSClient, instanceClass: string, version: string): Promise<OrderableDBInstanceOption[]> {
  const out: OrderableDBInstanceOption[] = [];
  let marker: string | undefined;
  do {
    const r = await rds.send(
      new DescribeOrderableDBInstanceOptionsCommand({ Engine: 'postgres', EngineVersion: version, DBInstanceClass: instanceClass, Vpc: true, MaxRecords: 1000, ...(marker ? { Marker: marker } : {}) }),
    );
    out.push(...(r.OrderableDBInstanceOptions ?? []));
    marker = r.Marker;
  } while (marker);
  return out;
}

export async function checkOrderable(rds: RDSClient, aws: AwsSpec, version: string): Promise<Verdict> {
  const { instanceClass, storage } = aws.database;
  let all: OrderableDBInstanceOption[];
  try {
    all = await options(rds, instanceClass, version);
  } catch (err) {
    return couldNotLook(CHECK, 'rds:DescribeOrderableDBInstanceOptions', err);
  }
  const what = `${instanceClass} PostgreSQL ${version}`;
  if (all.length === 0) {
    return refuse(CHECK, `${what} is not orderable in ${aws.region} (DescribeOrderableDBInstanceOptions has no option)`, 'set aws.database.instanceClass to a class RDS offers for this version (aws rds describe-orderable-db-instance-options --engine postgres --engine-version V --query "OrderableDBInstanceOptions[].DBInstanceClass")');
  }
  const gp3 = all.filter((o) => o.StorageType === storage.type);
  if (gp3.length === 0) {
    return refuse(CHECK, `${what} is not orderable with ${storage.type} storage in ${aws.region} (offered: ${[...new Set(all.map((o) => o.StorageType))].join(', ')})`, 'set aws.database.instanceClass to a class that offers gp3');
  }
  const inZone = gp3.find((o) => (o.AvailabilityZones ?? []).some((z) => z.Name === aws.zone));
  if (!inZone) {
    const zones = [...new Set(gp3.flatMap((o) => (o.AvailabilityZones ?? []).map((z) => z.Name ?? '')).filter(Boolean))].sort();
    return refuse(CHECK, `${what} with gp3 is not orderable in ${aws.zone} (it is in: ${zones.join(', ') || 'no zone'})`, `set aws.zone to one of ${zones.join(', ') || 'the zones that offer it'} (the nodes follow the database's zone), or another aws.database.instanceClass`);
  }
  const { MinStorageSize: min, MaxStorageSize: max } = inZone;
  if ((min !== undefined && storage.sizeGb < min) || (max !== undefined && storage.sizeGb > max)) {
    return refuse(CHECK, `${what} gp3 takes ${min ?? '?'}-${max ?? '?'} GB, the spec asks ${storage.sizeGb} GB`, `set aws.database.storage.sizeGb within ${min ?? '?'}-${max ?? '?'}`);
  }
  return pass(CHECK, `${what} with gp3 ${storage.sizeGb} GB is orderable in ${aws.zone}`);
}
