// The generator's connections: undici Clients (HTTP/1.1, keep-alive, one request at a time each), up
// to one per request slot, like k6's VUs each holding a connection.
//
// Why not undici's Pool: when every connection is busy, Pool opens a new one for each request that
// arrives and binds the request to it. A 30-ms hiccup at 10k requests/s then opens hundreds of
// connections at once; opening them costs the generator's event loop more than the hiccup did, replies
// are read late, more connections open, and the run ends in a storm of drops that measures the
// generator, not the server (seen on this 2-core machine). Here a request that finds no idle connection
// waits in a FIFO for the first one to free up, and new connections are opened at most
// MAX_CONNECTING at a time, so a short stall is absorbed by the connections there are, and a long
// one still grows the pool to as many connections as there are slots.
//
// Every request still holds its slot while it waits: the generator's drop rule is unchanged. The
// time it waits is not server time: the request's `sent` is taken when undici writes it to the
// socket (the handler's onConnect), so waiting shows as schedule lag (sent - intended) and in the
// corrected latency, as k6 keeps connecting/blocked time out of http_req_duration.
import { Client, type Dispatcher } from 'undici';

const MAX_CONNECTING = 16;

export interface PooledHandler extends Dispatcher.DispatchHandler {
  /** Set by the pool: the connection the request went out on (release it when the request ends). */
  client: Client | null;
}

interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: PooledHandler;
}

export class ConnectionPool {
  private readonly clients: Client[] = [];
  /** Idle connections, most recently used last: reusing the hottest keeps few sockets busy. */
  private readonly idle: Client[] = [];
  private readonly waiting: Waiting[] = [];
  private waitHead = 0;
  private connecting = 0;
  private readonly fresh = new WeakSet<Client>();
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly maxConnections: number,
    private readonly clientOptions: Client.Options = {},
  ) {}

  get size(): number {
    return this.clients.length;
  }

  /** Opens n connections now (each carries one GET of `path`), so the run starts on a warm pool. */
  async warm(n: number, path: string): Promise<void> {
    const count = Math.min(n, this.maxConnections) - this.clients.length;
    const fresh: Client[] = [];
    for (let i = 0; i < count; i++) fresh.push(this.newClient());
    await Promise.all(
      fresh.map((c) =>
        c.request({ path, method: 'GET' }).then(
          (r) => r.body.dump(),
          () => undefined,
        ),
      ),
    );
    this.idle.push(...fresh);
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: PooledHandler): void {
    if (this.closed) {
      handler.onError?.(new Error('connection pool closed'));
      return;
    }
    const idle = this.idle.pop();
    if (idle) return this.send(idle, opts, handler);
    if (this.clients.length < this.maxConnections && this.connecting < MAX_CONNECTING) {
      const c = this.newClient();
      this.connecting++;
      this.fresh.add(c);
      return this.send(c, opts, handler);
    }
    this.waiting.push({ opts, handler });
  }

  /** The request on this client has ended: the client takes the next waiting request, or idles. */
  release(client: Client): void {
    if (this.closed) return;
    if (this.fresh.has(client)) this.connected(client);
    const next = this.nextWaiting();
    if (next) this.send(client, next.opts, next.handler);
    else this.idle.push(client);
  }

  /** Called from a handler's onConnect: a fresh client's first request is on the wire. */
  connected(client: Client): void {
    if (!this.fresh.has(client)) return;
    this.fresh.delete(client);
    this.connecting--;
    // A connection slot to open has freed: a waiting request may have one.
    while (this.connecting < MAX_CONNECTING && this.clients.length < this.maxConnections && this.waitHead < this.waiting.length) {
      const next = this.nextWaiting() as Waiting;
      const c = this.newClient();
      this.connecting++;
      this.fresh.add(c);
      this.send(c, next.opts, next.handler);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failWaiting(new Error('connection pool closed'));
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }

  /** Aborts everything in flight (handlers get onError) and closes every connection. */
  async destroy(err: Error): Promise<void> {
    this.closed = true;
    this.failWaiting(err);
    await Promise.allSettled(this.clients.map((c) => c.destroy(err)));
  }

  private send(client: Client, opts: Dispatcher.DispatchOptions, handler: PooledHandler): void {
    handler.client = client;
    client.dispatch(opts, handler);
  }

  private nextWaiting(): Waiting | undefined {
    if (this.waitHead >= this.waiting.length) return undefined;
    const w = this.waiting[this.waitHead++];
    if (this.waitHead > 1024 && this.waitHead * 2 > this.waiting.length) {
      this.waiting.splice(0, this.waitHead);
      this.waitHead = 0;
    }
    return w;
  }

  private failWaiting(err: Error): void {
    while (this.waitHead < this.waiting.length) this.waiting[this.waitHead++].handler.onError?.(err);
    this.waiting.length = 0;
    this.waitHead = 0;
  }

  private newClient(): Client {
    const c = new Client(this.origin, this.clientOptions);
    this.clients.push(c);
    return c;
  }
}
