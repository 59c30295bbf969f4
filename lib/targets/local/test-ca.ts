// A throw-away certificate authority and the server certificate it signs, for a local cluster in
// RDS-fidelity mode: the cluster presents a certificate for 127.0.0.1 (and localhost), and every
// client verifies it against ca.pem with sslmode=verify-full, as against RDS's CA bundle. Made with
// the machine's openssl at provisioning. The CA's private key is deleted once it has signed: nothing
// else can ever be signed by it, so trusting ca.pem trusts this one cluster only.
import fs from 'node:fs';
import path from 'node:path';
import { runProgram } from '../../tools/run';
import type { OsUser } from './pg-binaries';

export interface ClusterTls {
  /** The CA certificate clients verify against (public; mode 0644). */
  caFile: string;
  /** The server's certificate and key (the key 0600, owned by the cluster's OS user, as PostgreSQL requires). */
  certFile: string;
  keyFile: string;
}

/** The names the server certificate is valid for: the cluster listens on 127.0.0.1 only. */
export const SERVER_NAMES = ['IP:127.0.0.1', 'DNS:localhost'];

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await runProgram('openssl', args, { cwd });
  } catch (err) {
    throw new Error(`RDS-fidelity mode needs openssl to make the cluster's test CA (apt-get install -y openssl): openssl ${args[0]} failed: ${(err as Error).message}`);
  }
}

/** Makes `<dir>/ca.pem`, `server.crt` and `server.key` (P-256 keys: quick to make, as RDS's ECC384 roots are EC too). */
export async function makeClusterTls(dir: string, opts: { label: string; user?: OsUser }): Promise<ClusterTls> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const days = '3650'; // a kept rig outlives a campaign; the CA key is gone, so a long validity grants nothing more
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  // The label is the campaign id or a test's folder: a subject names whose CA it is, never a secret.
  const cn = `rig test CA ${opts.label}`.replace(/[^A-Za-z0-9 ._-]/g, '-').slice(0, 60);
  await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', days, '-subj', `/CN=${cn}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  await openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'], dir);
  fs.writeFileSync(path.join(dir, 'server.ext'),
    `subjectAltName=${SERVER_NAMES.join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
  await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', days, '-extfile', 'server.ext'], dir);
  for (const f of ['ca.key', 'ca.srl', 'server.csr', 'server.ext']) fs.rmSync(path.join(dir, f), { force: true });
  const tls = { caFile: path.join(dir, 'ca.pem'), certFile: path.join(dir, 'server.crt'), keyFile: path.join(dir, 'server.key') };
  fs.chmodSync(tls.caFile, 0o644);
  fs.chmodSync(tls.certFile, 0o644);
  fs.chmodSync(tls.keyFile, 0o600);
  if (opts.user) {
    for (const f of [dir, tls.certFile, tls.keyFile]) fs.chownSync(f, opts.user.uid, opts.user.gid);
  }
  return tls;
}
