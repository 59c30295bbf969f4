// A real TLS endpoint in front of a dev server, for the connection tests: a throw-away CA, a server
// certificate for localhost/127.0.0.1 and a client certificate signed by it, plus a second CA that
// signed nothing the server has (the "wrong CA"), all made with openssl; and Debian's nginx
// (scripts/setup-tls-proxy.sh) terminating TLS, requiring a client certificate from the CA, and
// passing gRPC to the dev server (grpc_pass). nginx, not stunnel: the worker's core requires HTTP/2
// by ALPN. Stopped by its own pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/tools/free-port';

export interface TlsFiles {
  dir: string;
  ca: string;
  wrongCa: string;
  clientCert: string;
  clientKey: string;
}

export interface TlsProxy extends TlsFiles {
  /** 127.0.0.1:<port>, TLS with mTLS required. */
  address: string;
  stop(): Promise<void>;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

/** X.509 v3 certificates throughout: the worker's rustls refuses v1 ones (what `openssl x509 -req` makes without extensions). */
export function makeCertificates(dir: string, serverSan = 'DNS:localhost,IP:127.0.0.1'): TlsFiles {
  const ca = (name: string) => openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.crt`]);
  ca('rig-test-ca');
  ca('rig-wrong-ca');
  const leaf = (name: string, cn: string, ext: string) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'rig-test-ca.crt', '-CAkey', 'rig-test-ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
  };
  leaf('server', 'localhost', `basicConstraints=CA:FALSE\nsubjectAltName=${serverSan}\nextendedKeyUsage=serverAuth\n`);
  leaf('client', 'rig-test-client', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  const p = (f: string) => path.join(dir, f);
  return { dir, ca: p('rig-test-ca.crt'), wrongCa: p('rig-wrong-ca.crt'), clientCert: p('client.crt'), clientKey: p('client.key') };
}

/** nginx's path (RIG_NGINX, else Debian's), or undefined when there is none. */
export function nginxPath(): string | undefined {
  if (process.env.RIG_NGINX) return process.env.RIG_NGINX;
  return ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
}

export function nginxBinary(): string {
  const found = nginxPath();
  if (found) return found;
  throw new Error('nginx is missing: npm run setup:tls-proxy (Debian\'s nginx-light), or set RIG_NGINX');
}

/** Starts nginx on a free loopback port in front of `upstream` (host:port of a plain gRPC server). */
export async function startTlsProxy(upstream: string): Promise<TlsProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-tls-'));
  const files = makeCertificates(dir);
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  // master_process off: one process, so stopping it is one signal to the pid we started.
  fs.writeFileSync(
    conf,
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  server {
    listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${dir}/server.crt;
    ssl_certificate_key ${dir}/server.key;
    ssl_client_certificate ${files.ca};
    ssl_verify_client on;
    location / {
      grpc_pass grpc://${upstream};
      grpc_read_timeout 1h;
      grpc_send_timeout 1h;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(nginxBinary(), ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForListen(port, child, () => `${stderr}\n${readIf(path.join(dir, 'error.log'))}`);
  return {
    ...files,
    address: `127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const readIf = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');

async function waitForListen(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on ${port}: ${log()}`);
}
