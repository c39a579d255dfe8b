import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type WaitBound, waitFor } from '../wait-for.js';
import { killOnExit } from './kill-on-exit.js';

/** How to start a fixture app: the package folder it runs in, its entry file, its environment. */
export interface AppProcessOptions {
  /** The folder the app runs in (its package, whose node_modules resolve its imports). */
  cwd: string;
  /** The entry file, relative to `cwd`. Default `test/fixtures/app.ts`. */
  fixture?: string;
  env: Record<string, string>;
  /** How long the app may take to say it listens. Default 60 s (tsx on a loaded 2-core machine). */
  startTimeoutMs?: number;
  /**
   * The port, from the stdout line that says the app listens; undefined for any other line. Default: the
   * line `LISTENING <port>`.
   */
  listening?: (line: string) => number | undefined;
  /** Every stdout line, from the first on (the apps that print JSON events). */
  onLine?: (line: string) => void;
}

const listeningLine = (line: string): number | undefined => {
  const match = /^LISTENING (\d+)$/.exec(line);
  return match === null ? undefined : Number(match[1]);
};

/**
 * An app as its own Node process (through tsx), speaking a line protocol on stdout: `LISTENING <port>` once
 * it serves (or what `listening` reads), and `HOLDING <paymentId>` when a handler holds its transaction open
 * with the credit written. It can be killed like a crash and started again on its port. No process
 * outlives the test run, whatever ends it.
 *
 * @example
 * ```ts
 * const app = await AppProcess.start({ cwd: packageDir, env: { DATABASE_URL: url, PORT: '0' } });
 * await app.holding(paymentId);
 * await app.kill();
 * ```
 */
export class AppProcess {
  /** The payment ids whose handlers said HOLDING. */
  readonly held = new Set<string>();
  /**
   * What the app wrote on stderr, its last 500 lines: a crash's stack trace comes last, after whatever the
   * app logged while it ran.
   */
  readonly stderr: string[] = [];
  /** Set by a test's supervisor while it starts a replacement for this (dead) process. */
  restarting = false;
  #holdWaiters: Array<() => void> = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /** The app's webhook URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/webhook`;
  }

  /** Whether the process is still running. */
  get alive(): boolean {
    return this.ended === undefined;
  }

  /** How the process ended (`exit code 1`, `signal SIGKILL`), or undefined while it runs. */
  get ended(): string | undefined {
    if (this.child.signalCode !== null) return `signal ${this.child.signalCode}`;
    return this.child.exitCode === null ? undefined : `exit code ${this.child.exitCode}`;
  }

  static start(options: AppProcessOptions): Promise<AppProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', options.fixture ?? 'test/fixtures/app.ts'], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.once('exit', killOnExit(child));
    const stderr: string[] = [];
    let started: AppProcess | undefined;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const lines = started?.stderr ?? stderr;
      lines.push(line);
      if (lines.length > 500) lines.shift();
    });
    return new Promise((resolve, reject) => {
      const timeoutMs = options.startTimeoutMs ?? 60_000;
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`app did not start within ${timeoutMs} ms:\n${stderr.join('\n')}`));
      }, timeoutMs);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`app exited with ${code ?? signal}:\n${(started?.stderr ?? stderr).join('\n')}`));
      });
      const listening = options.listening ?? listeningLine;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        options.onLine?.(line);
        const port = started === undefined ? listening(line) : undefined;
        if (port !== undefined) {
          clearTimeout(timer);
          started = new AppProcess(child, port);
          started.stderr.push(...stderr);
          resolve(started);
        }
        const holding = /^HOLDING (\S+)$/.exec(line);
        if (holding !== null && started !== undefined) {
          started.held.add(holding[1] as string);
          for (const wake of started.#holdWaiters.splice(0)) wake();
        }
      });
    });
  }

  /** Resolves once this app's handler for `paymentId` holds its transaction with the credit written. */
  holding(paymentId: string, bound: WaitBound = { timeoutMs: 30_000 }): Promise<void> {
    return this.#untilHeld(`app on ${this.port} to hold ${paymentId}`, () => this.held.has(paymentId), bound);
  }

  /** Resolves once the app has said HOLDING for `count` payments. */
  holdingAtLeast(count: number, bound: WaitBound = { timeoutMs: 30_000 }): Promise<void> {
    return this.#untilHeld(`app on ${this.port} to hold ${count} payments`, () => this.held.size >= count, bound);
  }

  async #untilHeld(what: string, done: () => boolean, bound: WaitBound): Promise<void> {
    // Woken by each HOLDING line; the poll only bounds the wait.
    await waitFor(
      what,
      () => done() || new Promise<boolean>((wake) => this.#holdWaiters.push(() => wake(done()))),
      bound,
      0,
    );
  }

  /** SIGKILL: no shutdown, no goodbye to the database, like a crash or an OOM kill. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, then SIGKILL if it has not left within 5 s. Safe to call twice. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    const force = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    this.child.kill('SIGTERM');
    await exited;
    clearTimeout(force);
  }
}
