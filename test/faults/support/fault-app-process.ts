import { fileURLToPath } from 'node:url';
import { AppProcess, waitFor } from '@service-pay/test-kit';

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
  #app: AppProcess | undefined;
  #life = -1;
  #port = 0;

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
    return `http://127.0.0.1:${this.#port}`;
  }

  get webhookUrl(): string {
    return `${this.url}/webhooks/service`;
  }

  /** What the current process wrote on stderr. */
  get stderr(): string[] {
    return this.#app?.stderr ?? [];
  }

  /** Events named `ev`, optionally only those of one payment. */
  of(ev: string, paymentId?: string): AppEvent[] {
    return this.events.filter((e) => e.ev === ev && (paymentId === undefined || e.paymentId === paymentId));
  }

  /** Resolves once `predicate` holds for the events seen so far; rejects after `timeoutMs`. */
  async until(predicate: (events: AppEvent[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    await waitFor(`${this.name}: ${what}`, () => predicate(this.events), { timeoutMs }, 10);
  }

  /** SIGKILL, as a crash or an OOM kill would: handlers die wherever they are. */
  async kill(): Promise<void> {
    await this.#app?.kill();
  }

  /** Starts the app again on the port it had, as a process manager would. */
  async restart(): Promise<void> {
    await this.kill();
    await this.#spawn();
  }

  /** SIGTERM, then SIGKILL if it has not left in time. Safe to call twice. */
  async stop(): Promise<void> {
    await this.#app?.stop();
  }

  async #spawn(): Promise<void> {
    const life = ++this.#life;
    const event = (line: string): AppEvent | undefined => {
      if (!line.startsWith('{')) return undefined;
      try {
        return { ...(JSON.parse(line) as AppEvent), life };
      } catch {
        return undefined; // a line cut short by SIGKILL
      }
    };
    this.#app = await AppProcess.start({
      cwd: testDir,
      fixture,
      env: { ...this.env, FAULT_FRAMEWORK: this.framework, FAULT_APP: this.name, PORT: String(this.#port) },
      onLine: (line) => {
        const e = event(line);
        if (e !== undefined) this.events.push(e);
      },
      listening: (line) => {
        const e = event(line);
        return e?.ev === 'listening' ? Number(new URL(e.url as string).port) : undefined;
      },
    }).catch((error: Error) => {
      throw new Error(`${this.name}: ${error.message}`);
    });
    this.#port = this.#app.port;
  }
}
