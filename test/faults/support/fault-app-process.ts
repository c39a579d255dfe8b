import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { killOnExit } from '@service-pay/test-kit';

const testDir = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/fault-app.ts', import.meta.url));

/** One line the fixture app printed (see fixtures/fault-app.ts), with the process life it came from. */
export interface AppEvent {
  ev: string;
  at: number;
  app: string;
  /** 0 for the first process, 1 after the first restart, ... */
  life: number;
  paymentId?: string;
  deliveryId?: string;
  reason?: string;
  phase?: string;
  level?: string;
  msg?: string;
  code?: string;
  [field: string]: unknown;
}

export type Framework = 'express' | 'fastify';

/**
 * The fixture app as a real process: start, SIGKILL, restart on the same port, stop. Every line it
 * prints is kept in `events`, across restarts.
 */
export class FaultAppProcess {
  readonly events: AppEvent[] = [];
  readonly stderr: string[] = [];
  #child: ChildProcess | undefined;
  #life = -1;
  #port = 0;
  #url = '';

  private constructor(
    readonly name: string,
    readonly framework: Framework,
    private readonly env: Record<string, string>,
  ) {}

  static async start(name: string, framework: Framework, env: Record<string, string>): Promise<FaultAppProcess> {
    const app = new FaultAppProcess(name, framework, env);
    await app.#spawn();
    return app;
  }

  get url(): string {
    return this.#url;
  }

  get webhookUrl(): string {
    return `${this.#url}/webhooks/service`;
  }

  /** Events named `ev`, optionally only those of one payment. */
  of(ev: string, paymentId?: string): AppEvent[] {
    return this.events.filter((e) => e.ev === ev && (paymentId === undefined || e.paymentId === paymentId));
  }

  /** Resolves once `predicate` holds for the events seen so far; rejects after `timeoutMs`. */
  async until(predicate: (events: AppEvent[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (Date.now() > end) throw new Error(`${this.name}: ${what} did not happen within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** SIGKILL, as a crash or an OOM kill would: handlers die wherever they are. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Starts the app again on the port it had, as a process manager would. */
  async restart(): Promise<void> {
    await this.kill();
    await this.#spawn();
  }

  /** SIGTERM, then SIGKILL if it has not left within 2 s. Safe to call twice. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  async #spawn(): Promise<void> {
    const life = ++this.#life;
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      cwd: testDir,
      env: {
        ...process.env,
        ...this.env,
        FAULT_FRAMEWORK: this.framework,
        FAULT_APP: this.name,
        PORT: String(this.#port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    const forget = killOnExit(child);
    child.once('exit', forget);
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (this.stderr.length < 500) this.stderr.push(line);
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      try {
        this.events.push({ ...(JSON.parse(line) as AppEvent), life });
      } catch {
        // a line cut short by SIGKILL
      }
    });
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string) => {
        clearInterval(poll);
        reject(new Error(`${this.name} ${why}:\n${this.stderr.slice(-40).join('\n')}`));
      };
      const timer = setTimeout(() => fail('did not start within 60 s'), 60_000);
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        fail(`exited with ${code} while starting`);
      };
      child.once('exit', onExit);
      const poll = setInterval(() => {
        const listening = this.events.find((e) => e.ev === 'listening' && e.life === life);
        if (listening === undefined) return;
        clearInterval(poll);
        clearTimeout(timer);
        child.off('exit', onExit);
        this.#url = listening.url as string;
        this.#port = Number(new URL(this.#url).port);
        resolve();
      }, 10);
    });
  }
}
