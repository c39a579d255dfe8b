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
  readonly stderr: string[] = [];
  #holding = new Set<string>();
  #holdWaiters: Array<() => void> = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get #exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhook`;
  }

  static start(env: Record<string, string>): Promise<AppProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/app.ts'], {
      cwd: packageDir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const stderr: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (stderr.length < 200) stderr.push(line);
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`app did not start:\n${stderr.join('\n')}`)), 30_000);
      child.once('exit', (code) => reject(new Error(`app exited with ${code}:\n${stderr.join('\n')}`)));
      let app: AppProcess | undefined;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const listening = /^LISTENING (\d+)$/.exec(line);
        if (listening !== null && app === undefined) {
          clearTimeout(timer);
          app = new AppProcess(child, Number(listening[1]));
          resolve(app);
        }
        const holding = /^HOLDING (.+)$/.exec(line);
        if (holding !== null && app !== undefined) {
          app.#holding.add(holding[1] as string);
          for (const wake of app.#holdWaiters.splice(0)) wake();
        }
      });
    });
  }

  /** Resolves once this app has credited `paymentId` and holds its transaction open. */
  async holding(paymentId: string): Promise<void> {
    while (!this.#holding.has(paymentId)) await new Promise<void>((wake) => this.#holdWaiters.push(wake));
  }

  /** SIGKILL: no clean-up of any kind, as a crash or an OOM kill. */
  async kill(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
