// A CA bundle as AWS's newer global-bundle.pem would be for a region the vendored one lacks: the
// vendored certificates plus a self-signed root whose subject is the one RDS gives that region's
// default authority ("Amazon RDS <region> Root CA RSA2048 G1"), made here with openssl.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { VENDORED_RDS_CA } from '../../lib/targets/aws/rds-ca';
import { regionRootName } from '../../lib/targets/aws/rds-ca-coverage';

/** Writes <dir>/global-bundle.pem (vendored + the region's root, valid for `days`, 3650) and gives its path. */
export function bundleWithRegionRoot(dir: string, region: string, opts: { days?: number } = {}): string {
  const key = path.join(dir, `${region}.key`);
  const cert = path.join(dir, `${region}.pem`);
  const subj = `/C=US/O=Amazon Web Services, Inc./OU=Amazon RDS/ST=WA/CN=${regionRootName(region)}/L=Seattle`;
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-subj', subj, '-days', String(opts.days ?? 3650)];
  execFileSync('openssl', args, { stdio: 'pipe' });
  const out = path.join(dir, 'global-bundle.pem');
  fs.writeFileSync(out, fs.readFileSync(VENDORED_RDS_CA, 'utf8') + fs.readFileSync(cert, 'utf8'));
  return out;
}
