import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../free-port.js';
import { killOnExit } from '../processes/kill-on-exit.js';
import { sleep, waitFor } from '../wait-for.js';

const run = promisify(execFile);

/**
 * How the server keeps its data:
 * - `none`: nothing on disk, so a restart loses every key (the harshest case);
 * - `append-only`: an append-only file with `appendfsync always`, so every write acknowledged to a client
 *   survives a SIGKILL and is loaded again on restart.
 */
export type RedisPersistence = 'none' | 'append-only';

/** What a server of the test's own runs with. */
export interface RedisServerOptions {
  persistence?: RedisPersistence;
  /** More redis-server arguments (cluster mode, for one); relative paths land in the server's own folder. */
  args?: string[];
}

/**
 * One redis-cli command against the server on `port`; its trimmed output.
 *
 * @example
 * ```ts
 * await redisCli(server.port, 'client', 'pause', '1500', 'ALL');
 * ```
 */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 });
  return stdout.trim();
}

/**
 * A redis-server of the test's own on a free loopback port, in a temp folder of its own, so it can be
 * killed, paused, restarted and have its clients cut without touching the shared one on 6379. `stop()`
 * (and the test process exiting, even on a failed test) never leaves a stopped or paused server behind.
 *
 * @example
 * ```ts
 * const server = await RedisServer.start({ persistence: 'append-only' });
 * await server.kill();
 * await server.startAgain();
 * await server.stop();
 * ```
 */
export class RedisServer {
  #process: ChildProcess | undefined;
  #paused = false;

  private constructor(
    readonly port: number,
    readonly persistence: RedisPersistence,
    /** The server's folder: its append-only file, cluster config, and nothing else. */
    readonly dir: string,
    private readonly args: readonly string[],
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'service-pay-redis-'));
    const server = new RedisServer(await freePort(), options.persistence ?? 'none', dir, options.args ?? []);
    try {
      await server.startAgain();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again, after `kill`) on the same port and folder; resolves once it answers PING. */
  async startAgain(): Promise<void> {
    const persistence =
      this.persistence === 'none'
        ? ['--save', '', '--appendonly', 'no']
        : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--daemonize', 'no', '--dir', this.dir]
        .concat(persistence)
        .concat(this.args),
      { stdio: 'ignore' },
    );
    this.#process = child;
    this.#paused = false;
    child.once('exit', killOnExit(child));
    // PONG only once the append-only file is loaded (it answers -LOADING until then).
    await waitFor(
      `redis-server on ${this.port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
        return (await ping(this.port)) === '+PONG';
      },
      { timeoutMs: 20_000 },
    );
  }

  /** SIGKILL, as a crash would: no save, connections cut. A no-op when it is not running. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
      // A stopped process takes SIGKILL too; SIGCONT keeps any tooling that waits on it from hanging.
      if (this.#paused) child.kill('SIGCONT');
    });
    this.#paused = false;
  }

  /** Kills the server, waits `downMs`, starts it again on the same port. */
  async restart(downMs: number): Promise<void> {
    await this.kill();
    await sleep(downMs);
    await this.startAgain();
  }

  /**
   * SIGSTOP for `ms`, then SIGCONT: connections stay open but nothing is answered, as with a Redis stuck
   * in a long fork or a frozen VM. Commands sent meanwhile run when it wakes.
   */
  async pause(ms: number): Promise<void> {
    const child = this.#running();
    child.kill('SIGSTOP');
    this.#paused = true;
    try {
      await sleep(ms);
    } finally {
      this.#paused = false;
      if (child.exitCode === null) child.kill('SIGCONT');
    }
  }

  /**
   * Cuts every client connection (`CLIENT KILL TYPE normal SKIPME yes`) again and again for `forMs`, from
   * a connection of its own, so clients that reconnect inside the window are cut again. Returns how many
   * connections were cut and how many rounds ran.
   */
  async cutClients(forMs: number, everyMs = 10): Promise<{ cut: number; rounds: number }> {
    this.#running();
    const killer = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    killer.on('error', () => {});
    await killer.connect();
    let cut = 0;
    let rounds = 0;
    try {
      const end = Date.now() + forMs;
      while (Date.now() < end) {
        cut += Number(await killer.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
        rounds++;
        await sleep(everyMs);
      }
    } finally {
      killer.disconnect();
    }
    return { cut, rounds };
  }

  /** Stops the server for good (resumed first if paused) and removes its folder. Safe to call twice. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  #running(): ChildProcess {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on ${this.port} is not running`);
    }
    return child;
  }
}

/**
 * A 3-master Redis Cluster on loopback ports, started and torn down by the test.
 *
 * @example
 * ```ts
 * const cluster = await RedisCluster.start();
 * const client = new Redis.Cluster(cluster.nodes);
 * ```
 */
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
        const args = ['--cluster-enabled', 'yes', '--cluster-port', String(busPort)];
        // nodes.conf is relative to the server's own folder, removed with it.
        args.push('--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '3000');
        servers.push(await RedisServer.start({ args }));
      }
      const addresses = cluster.nodes.map((n) => `${n.host}:${n.port}`);
      await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
        timeout: 20_000,
      });
      for (const s of servers) {
        await waitFor(
          `cluster_state:ok on ${s.port}`,
          async () => (await redisCli(s.port, 'cluster', 'info')).includes('cluster_state:ok'),
          { timeoutMs: 20_000 },
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

/** One PING over a fresh socket; the first reply line, or an empty string when nothing answers. */
function ping(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (answer: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(''), 500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const end = reply.indexOf('\r\n');
      if (end !== -1) done(reply.slice(0, end));
    });
    socket.on('error', () => done(''));
  });
}
