// Copied from packages/postgres/test/support/app-process.ts (test helpers are not shared across packages).
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** One instance of `test/fixtures/app.ts` as its own Node process. */
export class AppProcess {
  readonly holding = new Set<string>();
  readonly stderr: string[] = [];
  #holdWaiters: Array<() => void> = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhook`;
  }

  static start(env: Record<string, string>, fixture = 'test/fixtures/app.ts'): Promise<AppProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      cwd: packageDir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const stderr: string[] = [];
    let started: AppProcess | undefined;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const lines = started?.stderr ?? stderr; // after the start, the app keeps what it says
      if (lines.length < 500) lines.push(line);
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`app did not start:\n${stderr.join('\n')}`)), 30_000);
      child.once('exit', (code) => reject(new Error(`app exited with ${code}:\n${stderr.join('\n')}`)));
      let app: AppProcess | undefined;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const listening = /^LISTENING (\d+)$/.exec(line);
        if (listening && app === undefined) {
          clearTimeout(timer);
          app = new AppProcess(child, Number(listening[1]));
          app.stderr.push(...stderr);
          started = app;
          resolve(app);
        }
        const holding = /^HOLDING (\S+)$/.exec(line);
        if (holding && app !== undefined) {
          app.holding.add(holding[1] as string);
          for (const wake of app.#holdWaiters.splice(0)) wake();
        }
      });
    });
  }

  /** Resolves once the app has said HOLDING for `count` payments (a handler holds its transaction). */
  async holdingAtLeast(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.holding.size < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.holding.size} of ${count} handlers held`);
      await new Promise<void>((resolve) => {
        this.#holdWaiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  /** Set by a test's supervisor while it starts a replacement for this (dead) process. */
  restarting = false;

  /** Whether the process is still running. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL: no shutdown, no goodbye to the database, like a crash. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    const force = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    this.child.kill('SIGTERM');
    await exited;
    clearTimeout(force);
  }
}
