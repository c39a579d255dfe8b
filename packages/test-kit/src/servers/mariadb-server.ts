import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { freePort } from '../free-port.js';
import { killOnExit } from '../processes/kill-on-exit.js';
import { waitFor } from '../wait-for.js';

const MARIADBD = '/usr/sbin/mariadbd';

/**
 * A MariaDB server of the test's own, on a free loopback port with a fresh data directory, which the test
 * may kill (-9) and start again: the machine's shared server is never stopped. Database `test`, user root
 * without a password.
 *
 * @example
 * ```ts
 * const server = await MariaDbServer.start();
 * await server.kill();
 * await server.startAgain();
 * await server.stop();
 * ```
 */
export class MariaDbServer {
  #process: ChildProcess | undefined;

  private constructor(
    private readonly dirs: ServerDirectories,
    readonly port: number,
    private readonly serverOptions: readonly string[],
  ) {}

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/test`;
  }

  /**
   * `serverOptions`: more `mariadbd` options, for a setting only a server's start can give
   * (`--innodb-rollback-on-timeout=ON`).
   */
  static async start(serverOptions: readonly string[] = []): Promise<MariaDbServer> {
    const dirs = serverDirectories();
    try {
      execFileSync(
        'mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${dirs.data}`,
          `--tmpdir=${dirs.tmp}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          '--user=root',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 },
      );
    } catch (error) {
      // What the tool said, and how it ended (a signal, the timeout): "Command failed" alone says neither.
      const { status, signal, stderr, stdout } = error as {
        status?: number | null;
        signal?: string | null;
        stderr?: Buffer;
        stdout?: Buffer;
      };
      const said = `${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`.trim().split('\n').slice(-15).join('\n');
      rmSync(dirs.root, { recursive: true, force: true });
      throw new Error(
        `mariadb-install-db for ${dirs.data} ended with status ${status ?? 'none'}, signal ${signal ?? 'none'}:\n${said}`,
        { cause: error },
      );
    }
    const server = new MariaDbServer(dirs, await freePort(), serverOptions);
    await server.startAgain();
    const admin = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root' });
    await admin.query('create database if not exists test');
    await admin.end();
    return server;
  }

  /** Starts the server on its data directory (again, after `kill`) and waits until it answers. */
  async startAgain(): Promise<void> {
    const child = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${this.dirs.data}`,
        `--tmpdir=${this.dirs.tmp}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(this.dirs.data, 'mariadb.sock')}`,
        '--user=root',
        '--innodb-buffer-pool-size=32M',
        '--max-connections=300',
        ...this.serverOptions,
      ],
      { stdio: 'ignore' },
    );
    child.once('exit', killOnExit(child));
    this.#process = child;
    await waitFor(
      `MariaDB on ${this.port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`mariadbd exited with ${child.exitCode}`);
        const probe = await mysql.createConnection({ host: '127.0.0.1', port: this.port, user: 'root' });
        await probe.end();
        return true;
      },
      { timeoutMs: 60_000 },
      100,
    );
  }

  /** Kills the server with SIGKILL, as a crash or a pulled plug would, and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dirs.root, { recursive: true, force: true });
  }
}

/** A server's own directory (`root`): its data, and its temporary files beside them. */
interface ServerDirectories {
  readonly root: string;
  readonly data: string;
  readonly tmp: string;
}

/**
 * Makes a server's directories. The temporary one is its own: a starting mariadbd deletes every `#sql*` file
 * in its tmpdir, so with the system's /tmp shared, one test's server starting deleted another's bootstrap
 * temporary tables (`mariadb-install-db` failed with "Could not remove temporary table" in a CI run).
 */
function serverDirectories(): ServerDirectories {
  const root = mkdtempSync(join(tmpdir(), 'service-pay-mariadb-'));
  const dirs = { root, data: join(root, 'data'), tmp: join(root, 'tmp') };
  mkdirSync(dirs.tmp);
  return dirs;
}
