import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on a free loopback port in front of a server of the test's own, for what a killed server
 * does only by chance: `cutAll()` resets every connection through it, and `resetHandshakes(n)` resets the
 * next `n` connections as soon as their client sends its first bytes, as a server that is going down
 * does to a client that reconnected to it a moment too early (its listener still accepted, then closed).
 * A client whose handshake is cut that way must try again, not take the dead connection for a live one.
 *
 * @example
 * ```ts
 * const proxy = await TcpProxy.start(server.port);
 * const client = createClient({ socket: { port: proxy.port } });
 * proxy.resetHandshakes(3);
 * proxy.cutAll();
 * await proxy.stop();
 * ```
 */
export class TcpProxy {
  readonly #open = new Set<Socket>();
  #resetsLeft = 0;
  #reset = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.#accept(client, targetPort));
    return proxy;
  }

  /** How many handshakes were reset so far. */
  get handshakesReset(): number {
    return this.#reset;
  }

  /** The next `count` connections are reset when their client first writes, before anything reaches the server. */
  resetHandshakes(count: number): void {
    this.#resetsLeft = count;
  }

  /** Resets every connection open through the proxy, both sides. */
  cutAll(): void {
    for (const socket of this.#open) socket.resetAndDestroy();
  }

  /** Cuts every connection and stops listening. */
  async stop(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #accept(client: Socket, targetPort: number): void {
    this.#track(client);
    if (this.#resetsLeft > 0) {
      this.#resetsLeft -= 1;
      client.once('data', () => {
        this.#reset += 1;
        client.resetAndDestroy();
      });
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    this.#track(upstream);
    client.pipe(upstream).pipe(client);
    // Either side ending ends the other: a proxy never keeps a half of a connection alive.
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
  }

  #track(socket: Socket): void {
    this.#open.add(socket);
    socket.on('error', () => {}); // a reset is what the proxy is for; the other side sees it
    socket.once('close', () => this.#open.delete(socket));
  }
}
