// Whether the RDS CA bundle the rig verifies with (rds-ca.ts) holds the root that the region's RDS
// server certificates chain to. RDS names each root by its region in the subject's CN ("Amazon RDS
// eu-west-1 Root CA RSA2048 G1"; also RSA4096 and ECC384 G1), and gives a new instance the
// rds-ca-rsa2048-g1 authority unless CreateDBInstance names another (the rig names none). A region
// newer than the bundle (il-central-1, ca-west-1, ap-southeast-5/-7 and mx-central-1 are missing from
// the vendored one) would fail verify-full only at `prepare`, once RDS bills: refused before anything
// is made instead, naming AWS's download and RIG_RDS_CA_BUNDLE. Under the emulator the stand-in
// cluster's test CA is used and there is no region's root to look for.
import { createHash, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { emulatorMap } from './emulator-map';
import { RDS_CA_ENV, RDS_CA_URL, rdsCaBundle, VENDORED_RDS_CA } from './rds-ca';
import { couldNotLook, pass, refuse, type Verdict } from './preflight-verdict';

const CHECK = 'rds-ca-bundle';

/** The CN RDS's default authority's root carries for `region`. */
export const regionRootName = (region: string) => `Amazon RDS ${region} Root CA RSA2048 G1`;

/** The CNs of the bundle's certificates valid at `now`. */
export function validRootNames(pem: string, now: Date): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const out: string[] = [];
  for (const b of blocks) {
    const x = new X509Certificate(b);
    if (Date.parse(x.validFrom) > now.getTime() || Date.parse(x.validTo) < now.getTime()) continue;
    const cn = /(?:^|\n)CN=([^\n]+)/.exec(x.subject)?.[1];
    if (cn) out.push(cn);
  }
  return out;
}

/** Which bundle is in use, where from, and its sha256 (for the evidence). */
export interface CaBundleInUse {
  file: string;
  /** 'vendored' (lib/targets/aws/rds-global-bundle.pem), RIG_RDS_CA_BUNDLE, or the emulator's test CA. */
  from: 'vendored' | typeof RDS_CA_ENV | 'emulator';
  sha256: string;
}

export function caBundleInUse(env: NodeJS.ProcessEnv = process.env): CaBundleInUse {
  const file = rdsCaBundle(env);
  const from = emulatorMap(env)?.dbCaFile ? 'emulator' : env[RDS_CA_ENV] ? RDS_CA_ENV : 'vendored';
  return { file, from, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex') };
}

/** The preflight's (and the dry run's) verdict on the bundle for `region`. */
export function checkCaCoverage(region: string, env: NodeJS.ProcessEnv = process.env, now: Date = new Date()): Verdict {
  let bundle: CaBundleInUse;
  try {
    bundle = caBundleInUse(env);
  } catch (err) {
    return refuse(CHECK, (err as Error).message, `download ${RDS_CA_URL} and set ${RDS_CA_ENV}=/path/to/global-bundle.pem`);
  }
  if (bundle.from === 'emulator') return pass(CHECK, `the emulator's stand-in CA ${bundle.file} (no region's root to look for)`);
  let names: string[];
  try {
    names = validRootNames(fs.readFileSync(bundle.file, 'utf8'), now);
  } catch (err) {
    return couldNotLook(CHECK, `reading ${bundle.file}`, err);
  }
  const want = regionRootName(region);
  const what = bundle.from === 'vendored' ? `the vendored bundle (${VENDORED_RDS_CA})` : `${RDS_CA_ENV} ${bundle.file}`;
  if (names.includes(want)) return pass(CHECK, `${what} holds "${want}" (sha256 ${bundle.sha256.slice(0, 12)})`);
  return refuse(
    CHECK,
    `${what} has no valid "${want}", the root RDS's server certificates in ${region} chain to: verify-full would fail at prepare, after RDS bills`,
    `download AWS's bundle (${RDS_CA_URL}) and set ${RDS_CA_ENV}=/path/to/global-bundle.pem (it goes into the nodes' package), or choose a region the bundle covers`,
  );
}
