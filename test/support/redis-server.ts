import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { freePort } from './free-port.js';

/**
 * A redis-server of the test's own on a free loopback port, so it can be killed and restarted without
 * touching the shared one on 6379. Keeps nothing on disk: a restart loses every key, the harshest case.
 */
export class RedisServer {
  #process: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.up();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.#process = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    for (let i = 0; i < 100; i++) {
      try {
        if (execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG')
          return;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  /** SIGKILL, as a crash would: no save, connections cut. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async restart(downForMs: number): Promise<void> {
    await this.kill();
    await new Promise((r) => setTimeout(r, downForMs));
    await this.up();
  }
}
