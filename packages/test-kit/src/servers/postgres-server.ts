import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../free-port.js';

const run = promisify(execFile);

/** The newest PostgreSQL server binaries Debian installed (`/usr/lib/postgresql/<version>/bin`). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) {
    throw new Error(`No PostgreSQL server binaries under ${root}: apt-get install -y postgresql (.ci/run does).`);
  }
  return join(root, versions[0], 'bin');
}

/** initdb and pg_ctl refuse to run as root: as root, run them as the `postgres` user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

// Whatever happens to a test (failure, timeout, a worker torn down), no server outlives the run.
const live = new Set<PostgresServer>();
process.once('exit', () => {
  for (const server of live) server.stopNowSync();
});

/**
 * A PostgreSQL server of the test's own: `initdb` into a temp dir and `pg_ctl` on a free loopback port,
 * trust auth for `postgres`. It can be stopped like a crash (`-m immediate`) and started again on the same
 * port and data, which then goes through crash recovery like a real restart.
 *
 * @example
 * ```ts
 * const server = await PostgresServer.start();
 * await server.stopImmediate();
 * await server.startAgain();
 * await server.stop();
 * ```
 */
export class PostgresServer {
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly bin: string,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PostgresServer> {
    const bin = binDir();
    const dir = mkdtempSync(join(tmpdir(), 'service-pay-pg-'));
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
      chownSync(dir, uid, gid);
    }
    const server = new PostgresServer(await freePort(), dir, bin);
    live.add(server);
    try {
      await server.#pg('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
      await server.startAgain();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  async #pg(tool: string, args: string[]): Promise<void> {
    const [command, full] = asServerUser(join(this.bin, tool), args);
    await run(command, full, { timeout: 60_000 });
  }

  #ctlArgs(action: string): string[] {
    return ['-D', join(this.dir, 'data'), '-w', '-t', '60', action];
  }

  /** Starts the server (again) on its port; resolves once it accepts connections. */
  async startAgain(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${this.dir}'`,
      '-c fsync=off', // the OS keeps the files across an immediate stop; only the server process dies
      '-c max_connections=200',
    ].join(' ');
    await this.#pg('pg_ctl', [...this.#ctlArgs('start'), '-l', join(this.dir, 'server.log'), '-o', options]);
  }

  /** `pg_ctl stop -m immediate`: every backend killed at once, no shutdown checkpoint, like a crash. */
  async stopImmediate(): Promise<void> {
    await this.#pg('pg_ctl', [...this.#ctlArgs('stop'), '-m', 'immediate']);
  }

  /** Stops the server (if running) and removes its files. */
  async stop(): Promise<void> {
    await this.stopImmediate().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
    live.delete(this);
  }

  /** Stops the server and removes its files without waiting on the event loop (at process exit). */
  stopNowSync(): void {
    try {
      const [command, args] = asServerUser(join(this.bin, 'pg_ctl'), [...this.#ctlArgs('stop'), '-m', 'immediate']);
      execFileSync(command, args, { stdio: 'ignore', timeout: 30_000 });
    } catch {}
    rmSync(this.dir, { recursive: true, force: true });
  }
}
