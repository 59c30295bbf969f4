// The instance's DbiResourceId: the name Enhanced Monitoring gives its log stream and the identifier
// Performance Insights knows it by (neither takes the DBInstanceIdentifier). Read once per collection
// from DescribeDBInstances.
import { DescribeDBInstancesCommand, type RDSClient } from '@aws-sdk/client-rds';

export async function dbiResourceId(rds: RDSClient, dbInstanceIdentifier: string): Promise<string> {
  const out = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbInstanceIdentifier }));
  const id = out.DBInstances?.[0]?.DbiResourceId;
  if (!id) throw new Error(`DescribeDBInstances: ${dbInstanceIdentifier} has no DbiResourceId`);
  return id;
}
