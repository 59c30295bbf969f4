// Why a TLS connection to Temporal failed, in words that name the fix. The SDK's own errors do not
// say: the client's gRPC gives "Failed to connect before the deadline" for a wrong CA, and the
// worker's core a tonic transport error. So after a failed connect the rig dials once more with
// Node's TLS, using the same CA, client certificate and server name, and asks for GetSystemInfo
// over HTTP/2, to see which part is refused: the server's certificate (CA, name, expiry), the
// client certificate (none sent, or not trusted), or TLS itself (a plain port, no HTTP/2).
// A server that refuses a client certificate does so either with a TLS alert (Temporal's own mTLS,
// Temporal Cloud) or, behind a TLS-terminating proxy such as nginx, with an HTTP 400 after the
// handshake; both are read. Returns undefined when TLS is not the problem.
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { TLSConfig } from '@temporalio/client';
import type { TemporalEnv } from './connection-env';

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const CLIENT_CERT_ALERT = /ALERT_CERTIFICATE_REQUIRED|ALERT_HANDSHAKE_FAILURE|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_CERTIFICATE_UNKNOWN|ALERT_ACCESS_DENIED/;

const CA_FIX = "set TEMPORAL_TLS_SERVER_CA_CERT_PATH (or the profile's tls.server_ca_cert_path) to the CA that signed it";
const CERT_FIX = "set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or the profile's tls.client_cert_path and tls.client_key_path)";

export function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  return m ? { host: m[1], port: Number(m[2]) } : { host: address, port: 7233 };
}

const subjectOf = (pem: Uint8Array | undefined): string | undefined => {
  if (!pem) return undefined;
  try {
    return new X509Certificate(Buffer.from(pem)).subject.replace(/\n/g, ', ');
  } catch {
    return undefined;
  }
};

interface Probe {
  error?: NodeJS.ErrnoException & { cert?: tls.PeerCertificate };
  alpn?: string | false;
  status?: number;
  body?: string;
  peer?: tls.PeerCertificate;
}

/** One TLS dial and one gRPC call, recording where it stopped. */
function probe(env: TemporalEnv, t: TLSConfig, verify: boolean, timeoutMs: number): Promise<Probe> {
  const { host, port } = splitAddress(env.address);
  const servername = t.serverNameOverride ?? (net.isIP(host) ? undefined : host);
  return new Promise((resolve) => {
    const result: Probe = {};
    let session: http2.ClientHttp2Session | undefined;
    const socket = tls.connect({
      host,
      port,
      ...(servername ? { servername } : {}),
      ...(t.serverRootCACertificate ? { ca: Buffer.from(t.serverRootCACertificate) } : {}),
      ...(t.clientCertPair ? { cert: Buffer.from(t.clientCertPair.crt), key: Buffer.from(t.clientCertPair.key) } : {}),
      ALPNProtocols: ['h2'],
      rejectUnauthorized: verify,
    });
    const done = () => {
      clearTimeout(timer);
      session?.destroy();
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('error', (err) => {
      result.error ??= err;
      done();
    });
    socket.once('secureConnect', () => {
      result.alpn = socket.alpnProtocol ?? false;
      result.peer = socket.getPeerCertificate();
      if (!verify || socket.alpnProtocol !== 'h2') return done();
      session = http2.connect(`https://${env.address}`, { createConnection: () => socket });
      session.on('error', (err) => {
        result.error ??= err;
        done();
      });
      const headers: http2.OutgoingHttpHeaders = {
        ':method': 'POST',
        ':path': '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo',
        'content-type': 'application/grpc',
        te: 'trailers',
      };
      if (env.apiKey) headers.authorization = `Bearer ${env.apiKey}`;
      const req = session.request(headers);
      let body = '';
      req.on('response', (h) => {
        result.status = Number(h[':status']);
      });
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('latin1');
      });
      req.on('end', () => {
        result.body = body;
        done();
      });
      req.on('error', (err) => {
        result.error ??= err;
        done();
      });
      req.end(Buffer.alloc(5)); // an empty gRPC message: no compression flag, zero length
    });
  });
}

export async function diagnoseTls(env: TemporalEnv, timeoutMs = 5_000): Promise<string | undefined> {
  if (env.tls === undefined || env.tls === false) return undefined;
  const t: TLSConfig = env.tls === true ? {} : env.tls;
  const caDesc = t.serverRootCACertificate ? `the CA the rig was given (${subjectOf(t.serverRootCACertificate) ?? 'unreadable'})` : "any CA in the system's trust store";
  const sentCert = t.clientCertPair ? `the rig's client certificate (${subjectOf(t.clientCertPair.crt) ?? 'unreadable'})` : undefined;
  const p = await probe(env, t, true, timeoutMs);
  const code = p.error?.code ?? '';
  if (code && UNTRUSTED.has(code)) {
    const seen = (await probe(env, t, false, timeoutMs)).peer;
    const who = seen?.subject ? ` (${formatName(seen.subject)}, issued by ${formatName(seen.issuer)})` : '';
    return `the server's certificate${who} is not signed by ${caDesc}: ${CA_FIX}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = p.error?.cert?.subjectaltname ?? 'no names';
    return `the server's certificate does not hold the name the rig checks (${t.serverNameOverride ?? splitAddress(env.address).host}; it holds ${names}): set TEMPORAL_TLS_SERVER_NAME (or the profile's tls.server_name) to one of those`;
  }
  if (code === 'CERT_HAS_EXPIRED') return `the server's certificate has expired (${p.error?.message}): the server needs a new one`;
  if (CLIENT_CERT_ALERT.test(code) || (p.status === 400 && /certificate/i.test(p.body ?? ''))) {
    return sentCert
      ? `the server refused ${sentCert}: it must be signed by a CA the server trusts for clients (and not have expired)`
      : `the server asks for a client certificate (mTLS) and the rig sent none: ${CERT_FIX}`;
  }
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|ERR_SSL_HTTP_REQUEST/.test(code) || /wrong version number/i.test(p.error?.message ?? '')) {
    return `the server at ${env.address} does not speak TLS there: use its TLS port, or turn TLS off (TEMPORAL_TLS=false, or the profile's tls.disabled = true)`;
  }
  if (p.alpn !== undefined && p.alpn !== 'h2') {
    return `the TLS endpoint at ${env.address} does not offer HTTP/2 (ALPN h2), which gRPC needs: a proxy in front of Temporal must pass gRPC (nginx: \`listen ... ssl http2\` and grpc_pass)`;
  }
  return undefined;
}

function formatName(n: tls.Certificate | undefined): string {
  if (!n) return 'unknown';
  return Object.entries(n)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`)
    .join(', ');
}
