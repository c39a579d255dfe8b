import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { killOnExit } from './kill-on-exit.js';

/**
 * How the server keeps its data:
 * - `none`: nothing on disk, so a restart loses every key (the harshest case);
 * - `append-only`: an append-only file with `appendfsync always` in a temp directory, so every write
 *   acknowledged to a client survives a SIGKILL and is loaded again on restart.
 */
export type RedisPersistence = 'none' | 'append-only';

/**
 * A redis-server of the test's own on a free loopback port, so it can be killed, paused, restarted and
 * have its clients cut without touching the shared one on 6379. `stop()` (and the process exiting, even
 * on a failed test) never leaves a stopped or paused server behind.
 */
export class RedisServer {
  #process: ChildProcess | undefined;
  #paused = false;
  #forget: (() => void) | undefined;

  private constructor(
    readonly port: number,
    readonly persistence: RedisPersistence,
    /** The append-only file's directory; undefined without persistence. */
    readonly dir: string | undefined,
  ) {}

  static async start(options: { persistence?: RedisPersistence } = {}): Promise<RedisServer> {
    const persistence = options.persistence ?? 'none';
    const dir = persistence === 'append-only' ? mkdtempSync(join(tmpdir(), 'service-pay-redis-')) : undefined;
    const server = new RedisServer(await freePort(), persistence, dir);
    await server.up();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on the same port and, with persistence, the same directory. */
  async up(): Promise<void> {
    const persistence =
      this.dir === undefined
        ? ['--save', '', '--appendonly', 'no']
        : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir];
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', ...persistence], {
      stdio: 'ignore',
    });
    this.#process = child;
    this.#paused = false;
    this.#forget = killOnExit(child);
    child.once('exit', () => this.#forget?.());
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) break;
      // PONG only once the append-only file is loaded (it answers -LOADING until then).
      if ((await ping(this.port)) === '+PONG') return;
      await sleep(50);
    }
    throw new Error(`redis-server on ${this.port} did not start`);
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
    await this.up();
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

  /** Stops the server for good (resumed first if paused) and removes its directory. Safe to call twice. */
  async stop(): Promise<void> {
    await this.kill();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }

  #running(): ChildProcess {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on ${this.port} is not running`);
    }
    return child;
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
