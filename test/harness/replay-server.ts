// A tiny HTTP server on 127.0.0.1 (a free port) that answers AWS SDK calls with recorded response
// shapes (test/targets/aws/fixtures), for the APIs the emulator has no backend for. `answer` sees each
// request (method, headers, body) and returns status, content type and body; every request is kept in
// `requests` for the test to check what the SDK sent. Stopped by the test's `after` hook.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReplayRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export interface ReplayAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface ReplayServer {
  endpoint: string;
  requests: ReplayRequest[];
  stop(): Promise<void>;
}

export async function startReplayServer(answer: (req: ReplayRequest) => ReplayAnswer): Promise<ReplayServer> {
  const requests: ReplayRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReplayRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(r);
      let a: ReplayAnswer;
      try {
        a = answer(r);
      } catch (err) {
        a = { status: 500, contentType: 'text/plain', body: String(err) };
      }
      res.writeHead(a.status, { 'content-type': a.contentType, 'x-amzn-requestid': `replay-${requests.length}` });
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A fixture file with its {{NAME}} placeholders filled. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{\{([A-Z0-9_]+)\}\}/g, (m, k: string) => (k in values ? String(values[k]) : m));
}
