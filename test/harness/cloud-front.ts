// A Temporal-Cloud-shaped front for tests: a TLS gRPC endpoint (Node's http2, in this process) in
// front of a test's plain dev server that behaves as Cloud does where the rig can get it wrong:
// - TLS only, on its own endpoint name (`<namespace>.<account>.tmprl.cloud`-like, in the server
//   certificate; the client reaches 127.0.0.1 and names the endpoint with TEMPORAL_TLS_SERVER_NAME);
//   a client that names another endpoint (SNI) is refused;
// - an API key (`authorization: Bearer <key>`) on every call, else UNAUTHENTICATED (16), or, when
//   made with `clientCa`, a client certificate signed by it (Cloud's mTLS namespaces);
// - the OperatorService refused with PERMISSION_DENIED (7), as Cloud refuses it;
// - every call recorded: TLS, SNI, ALPN, :authority, metadata keys and values (the key masked), the
//   client certificate's subject. Calls that pass are forwarded to the dev server unchanged.
// A plaintext client never gets past the TLS handshake; that is recorded too (`plaintext`).
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { freePort } from '../../lib/tools/free-port';
import { makeCertificates, type TlsFiles } from './tls-proxy';

export interface FrontCall {
  path: string;
  /** The client's user-agent (grpc-node-js: a Connection; temporal-core: a worker's; grpc-go: the CLI). */
  client: string;
  sni: string | undefined;
  alpn: string | false | null;
  authority: string | undefined;
  /** Metadata the client sent, lower-case keys; `authorization` shown as `Bearer <valid|wrong key>`. */
  metadata: Record<string, string>;
  apiKey: 'valid' | 'wrong' | 'absent';
  /** CN of the client certificate, when one was presented. */
  clientCert?: string;
  /** The gRPC status the front answered with itself (refusals); undefined when forwarded. */
  refused?: number;
}

export interface CloudFront extends TlsFiles {
  /** 127.0.0.1:<port>: what TEMPORAL_ADDRESS points at. */
  address: string;
  /** The endpoint's own name, in its certificate: TEMPORAL_TLS_SERVER_NAME. */
  serverName: string;
  apiKey: string;
  calls: FrontCall[];
  /** Connections that were not TLS at all (a plaintext client), or whose handshake failed. */
  handshakeFailures: string[];
  /** Points the front at another upstream (a dev server restarted elsewhere). */
  setUpstream(address: string): void;
  /** The environment for `rig` / `temporal` child processes that reach the namespace through the front by API key. */
  env(namespace?: string): Record<string, string>;
  stop(): Promise<void>;
}

const GRPC_OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const HOP_BY_HOP = new Set([':scheme', ':authority', ':method', ':path', 'authorization']);

export async function startCloudFront(opts: { upstream: string; namespace?: string; apiKey?: string; mtls?: boolean }): Promise<CloudFront> {
  const namespace = opts.namespace ?? 'default';
  const serverName = `${namespace}.rigtest.tmprl.cloud`;
  const apiKey = opts.apiKey ?? 'rig-test-api-key-0123456789';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rig-cloud-front-'));
  const files = makeCertificates(dir, `DNS:${serverName}`);
  const port = await freePort();
  const calls: FrontCall[] = [];
  const handshakeFailures: string[] = [];
  let upstream = opts.upstream;
  let session: http2.ClientHttp2Session | undefined;
  const upstreamSession = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(`http://${upstream}`);
      session.on('error', () => undefined); // each request sees its own error
    }
    return session;
  };

  const server = http2.createSecureServer({
    cert: fs.readFileSync(path.join(dir, 'server.crt')),
    key: fs.readFileSync(path.join(dir, 'server.key')),
    ...(opts.mtls ? { ca: fs.readFileSync(files.ca), requestCert: true, rejectUnauthorized: false } : {}),
    allowHTTP1: false,
  });
  server.on('tlsClientError', (err) => handshakeFailures.push(err.message));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith(':') || ['content-type', 'te', 'user-agent', 'grpc-accept-encoding', 'grpc-encoding', 'grpc-timeout', 'accept-encoding'].includes(k)) continue;
      metadata[k] = String(v);
    }
    const auth = headers.authorization as string | undefined;
    const apiKeyState = auth === undefined ? 'absent' : auth === `Bearer ${apiKey}` ? 'valid' : 'wrong';
    if (auth !== undefined) metadata.authorization = `Bearer <${apiKeyState} key>`;
    const peer = opts.mtls && socket?.authorized ? socket.getPeerCertificate() : undefined;
    const call: FrontCall = {
      path: String(headers[':path']),
      client: String(headers['user-agent'] ?? ''),
      sni: (socket?.servername as string | false | undefined) || undefined,
      alpn: socket?.alpnProtocol ?? null,
      authority: headers[':authority'] as string | undefined,
      metadata,
      apiKey: apiKeyState,
      ...(peer?.subject ? { clientCert: String(peer.subject.CN) } : {}),
    };
    calls.push(call);
    const refuse = (code: number, message: string) => {
      call.refused = code;
      if (stream.destroyed || stream.headersSent) return;
      stream.respond({ ...GRPC_OK_HEADERS, 'grpc-status': String(code), 'grpc-message': grpcMessage(message) }, { endStream: true });
    };
    stream.on('error', () => undefined);
    if (call.sni !== serverName) return refuse(7, `this endpoint serves namespace ${namespace} as ${serverName}; the client named ${call.sni ?? 'no server (no SNI)'}`);
    if (opts.mtls ? !peer : apiKeyState !== 'valid') {
      return refuse(16, opts.mtls ? 'a client certificate signed by the namespace\'s CA is required' : `Request unauthorized: API key ${apiKeyState}`);
    }
    if (call.path.startsWith('/temporal.api.operatorservice.v1.OperatorService/')) return refuse(7, 'Request unauthorized.');
    forward(stream, headers, upstreamSession(), refuse);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = `127.0.0.1:${port}`;
  return {
    ...files,
    address,
    serverName,
    apiKey,
    calls,
    handshakeFailures,
    setUpstream(a) {
      upstream = a;
      session?.close();
      session = undefined;
    },
    env: (ns = namespace) => ({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: ns,
      TEMPORAL_API_KEY: apiKey,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      TEMPORAL_TLS_SERVER_NAME: serverName,
    }),
    async stop() {
      session?.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Long polls keep their sessions open; close() waits for them otherwise.
        for (const s of sessions) s.destroy();
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** grpc-message's percent-encoding (gRPC's HTTP/2 spec): only bytes outside printable ASCII, and '%'. */
function grpcMessage(message: string): string {
  return [...Buffer.from(message)].map((b) => (b < 0x20 || b > 0x7e || b === 0x25 ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b))).join('');
}

/** One call, passed through: request headers and body up, response headers, body and trailers down. */
function forward(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  upstream: http2.ClientHttp2Session,
  refuse: (code: number, message: string) => void,
): void {
  const out: http2.OutgoingHttpHeaders = { ':method': 'POST', ':path': headers[':path'] };
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
  let req: http2.ClientHttp2Stream;
  try {
    req = upstream.request(out);
  } catch (err) {
    return refuse(14, `upstream unavailable: ${(err as Error).message}`);
  }
  let trailers: http2.IncomingHttpHeaders | undefined;
  req.on('response', (resHeaders, flags) => {
    if (stream.destroyed) return;
    const h: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(resHeaders)) if (v !== undefined && (k === ':status' || !k.startsWith(':'))) h[k] = v;
    const endStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    stream.respond(h, endStream ? { endStream: true } : { waitForTrailers: true });
  });
  req.on('trailers', (t) => (trailers = t));
  stream.on('wantTrailers', () => {
    const t: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(trailers ?? { 'grpc-status': '14', 'grpc-message': 'upstream closed without trailers' })) if (v !== undefined && !k.startsWith(':')) t[k] = v;
    stream.sendTrailers(t);
  });
  req.on('error', (err) => {
    if (!stream.headersSent) refuse(14, `upstream: ${err.message}`);
    else if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  });
  stream.on('close', () => {
    if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
  });
  stream.pipe(req);
  req.pipe(stream);
}
