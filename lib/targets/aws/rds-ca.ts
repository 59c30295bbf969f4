// The CA bundle the rig verifies RDS's server certificate against (sslmode=verify-full): the one
// vendored beside this file (rds-global-bundle.pem, its origin in rds-global-bundle.SOURCE), or the
// file RIG_RDS_CA_BUNDLE names (AWS's newer global-bundle.pem), or under the AWS emulator the stand-in
// cluster's test CA (RIG_AWS_EMULATOR_MAP's dbCaFile, refused on real AWS).
// RDS for PostgreSQL 15+ refuses plaintext (rds.force_ssl=1), and verifying the host name is what
// keeps a password from going to whoever answers at the endpoint's address.
import fs from 'node:fs';
import path from 'node:path';
import { emulatorMap } from './emulator-map';

export const RDS_CA_ENV = 'RIG_RDS_CA_BUNDLE';
export const RDS_CA_URL = 'https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem';

/** The vendored bundle (in the package the nodes run: every file git tracks is in it). */
export const VENDORED_RDS_CA = path.join(__dirname, 'rds-global-bundle.pem');

/** The bundle's path; throws naming the variable, the file and where AWS publishes it when it cannot be read. */
export function rdsCaBundle(env: NodeJS.ProcessEnv = process.env): string {
  const file = emulatorMap(env)?.dbCaFile || env[RDS_CA_ENV] || VENDORED_RDS_CA;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `aws target: the RDS CA bundle ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ` +
        `download ${RDS_CA_URL} and ${env[RDS_CA_ENV] ? 'put it there' : `set ${RDS_CA_ENV} to its path`}`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`aws target: ${file} (${env[RDS_CA_ENV] ? RDS_CA_ENV : 'the vendored bundle'}) holds no PEM certificate: download ${RDS_CA_URL} again`);
  }
  return file;
}
