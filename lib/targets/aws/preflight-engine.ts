// Preflight: the engine version RDS will really create, and its parameter group family, from
// DescribeDBEngineVersions (RDS API reference, DescribeDBEngineVersions / DBEngineVersion). A major on
// its own ("16") asks for that major's default minor (DefaultOnly); a major.minor must be offered as
// it is: RDS retires minors (16.4 is no longer created), and a retired one is refused listing the
// versions offered. The family comes from the answer's DBParameterGroupFamily, never from the string.
import { DescribeDBEngineVersionsCommand, type DBEngineVersion, type RDSClient } from '@aws-sdk/client-rds';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';

export interface ResolvedEngine {
  /** What CreateDBInstance gets, e.g. 16.9. */
  version: string;
  /** What CreateDBParameterGroup gets, e.g. postgres16. */
  family: string;
}

const CHECK = 'engine-version';

async function offeredVersions(rds: RDSClient): Promise<string[]> {
  const out: string[] = [];
  let marker: string | undefined;
  do {
    const r = await rds.send(new DescribeDBEngineVersionsCommand({ Engine: 'postgres', MaxRecords: 100, ...(marker ? { Marker: marker } : {}) }));
    for (const v of r.DBEngineVersions ?? []) if (v.EngineVersion && (v.Status ?? 'available') === 'available') out.push(v.EngineVersion);
    marker = r.Marker;
  } while (marker);
  return out;
}

const byVersion = (a: string, b: string) => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  return x[0] - y[0] || (x[1] ?? 0) - (y[1] ?? 0);
};

/** The verdict, and the version and family when it holds. */
export async function resolveEngineVersion(rds: RDSClient, asked: string, region: string): Promise<Verdict & { resolved?: ResolvedEngine }> {
  const major = !asked.includes('.');
  let found: DBEngineVersion | undefined;
  try {
    const r = await rds.send(new DescribeDBEngineVersionsCommand({ Engine: 'postgres', EngineVersion: asked, ...(major ? { DefaultOnly: true } : {}) }));
    found = (r.DBEngineVersions ?? []).find((v) => v.EngineVersion && (major ? v.EngineVersion.split('.')[0] === asked : v.EngineVersion === asked));
  } catch (err) {
    return couldNotLook(CHECK, 'rds:DescribeDBEngineVersions', err);
  }
  if (found?.EngineVersion && found.DBParameterGroupFamily) {
    const resolved = { version: found.EngineVersion, family: found.DBParameterGroupFamily };
    return { ...pass(CHECK, `PostgreSQL ${asked}${major ? ` is ${resolved.version} (the major's default minor)` : ''}, parameter group family ${resolved.family}`), resolved };
  }
  let offered: string[];
  try {
    offered = (await offeredVersions(rds)).sort(byVersion);
  } catch (err) {
    return couldNotLook(CHECK, 'rds:DescribeDBEngineVersions', err);
  }
  const sameMajor = offered.filter((v) => v.split('.')[0] === asked.split('.')[0]);
  const list = (sameMajor.length ? sameMajor : offered).join(', ') || 'none';
  return refuse(
    CHECK,
    `PostgreSQL ${asked} is not offered by RDS in ${region} (DescribeDBEngineVersions); offered${sameMajor.length ? ` in major ${asked.split('.')[0]}` : ''}: ${list}`,
    `set aws.database.engineVersion to one of those, or to the major alone (e.g. "${(sameMajor[0] ?? offered.at(-1) ?? '16').split('.')[0]}") for its default minor`,
  );
}
