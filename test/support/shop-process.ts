import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { killOnExit } from '@service-pay/test-kit';

const exampleDir = fileURLToPath(new URL('../../examples/express-orders/', import.meta.url));

/** One instance of the Express example shop, as its own Node process; it can be killed and restarted. */
export class ShopProcess {
  private constructor(
    private child: ChildProcess,
    readonly url: string,
    readonly stderr: string[],
    private readonly env: Record<string, string>,
  ) {}

  static async start(env: Record<string, string>): Promise<ShopProcess> {
    const stderr: string[] = [];
    const { child, url } = await spawnShop({ PORT: '0', ...env }, stderr);
    return new ShopProcess(child, url, stderr, env);
  }

  /** SIGKILL, as a crash would: requests in flight die with it, its in-memory tally too. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Starts the shop again on the same port, as a process manager would (its tally starts at zero). */
  async restart(): Promise<void> {
    await this.kill();
    this.child = (await spawnShop({ ...this.env, PORT: new URL(this.url).port }, this.stderr)).child;
  }

  async stats(): Promise<{ credited: number; caughtByDatabase: number; rejected: number; injectedFailures: number }> {
    return (await fetch(`${this.url}/stats`)).json() as never;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}

async function spawnShop(env: Record<string, string>, stderr: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: exampleDir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const forget = killOnExit(child);
  child.once('exit', forget);
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (stderr.length < 200) stderr.push(line);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`shop did not start:\n${stderr.join('\n')}`)), 60_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`shop exited with ${code}:\n${stderr.join('\n')}`));
    };
    child.once('exit', onExit);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve((JSON.parse(line) as { listening: string }).listening);
    });
  });
  return { child, url };
}
