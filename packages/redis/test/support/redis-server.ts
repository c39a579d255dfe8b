import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Whatever happens to a test (failure, timeout, a worker torn down), no redis-server outlives the run.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 });
  return stdout.trim();
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A redis-server of the test's own on a free loopback port, without persistence: it can be killed like a
 * crash and started again on the same port (empty, as a server without persistence comes back).
 */
export class RedisServer {
  #child: ChildProcess | undefined;
  readonly #dir = mkdtempSync(join(tmpdir(), 'service-pay-redis-'));

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[],
  ) {}

  static async start(extraArgs: string[] = []): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), extraArgs);
    try {
      await server.start();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get dir(): string {
    return this.#dir;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--daemonize', 'no', '--dir', this.#dir, ...this.extraArgs);
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    live.add(child);
    child.once('exit', () => live.delete(child));
    this.#child = child;
    await waitFor(`redis-server on ${this.port}`, async () => (await redisCli(this.port, 'ping')) === 'PONG');
  }

  /** SIGKILL: no shutdown, no goodbye to clients, like a crash or a pulled cable on the server side. */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** A 3-master Redis Cluster on loopback ports, started and torn down by the test. */
export class RedisCluster {
  private constructor(readonly servers: RedisServer[]) {}

  get nodes(): { host: string; port: number }[] {
    return this.servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
  }

  static async start(): Promise<RedisCluster> {
    const servers: RedisServer[] = [];
    const cluster = new RedisCluster(servers);
    try {
      for (let i = 0; i < 3; i++) {
        // The bus port is chosen too (cluster-port): the default, port + 10000, may not be free or valid.
        const busPort = await freePort();
        servers.push(
          await RedisServer.start([
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(busPort),
            // Relative to the server's own temp --dir, removed with it.
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '3000',
          ]),
        );
      }
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...cluster.nodes.map((n) => `${n.host}:${n.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { timeout: 20_000 },
      );
      for (const s of servers) {
        await waitFor(`cluster_state:ok on ${s.port}`, async () =>
          (await redisCli(s.port, 'cluster', 'info')).includes('cluster_state:ok'),
        );
      }
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
