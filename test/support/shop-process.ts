import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const exampleDir = fileURLToPath(new URL('../../examples/express-orders/', import.meta.url));

/** One instance of the Express example shop, as its own Node process. */
export class ShopProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly stderr: string[],
  ) {}

  static async start(env: Record<string, string>): Promise<ShopProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: exampleDir,
      env: { ...process.env, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (stderr.length < 200) stderr.push(line);
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`shop did not start:\n${stderr.join('\n')}`)), 60_000);
      child.once('exit', (code) => reject(new Error(`shop exited with ${code}:\n${stderr.join('\n')}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { listening: string }).listening);
      });
    });
    return new ShopProcess(child, url, stderr);
  }

  async stats(): Promise<{ credited: number; caughtByDatabase: number; rejected: number; injectedFailures: number }> {
    return (await fetch(`${this.url}/stats`)).json() as never;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      this.child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      this.child.kill('SIGTERM');
    });
  }
}
