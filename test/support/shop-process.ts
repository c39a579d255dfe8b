import { fileURLToPath } from 'node:url';
import { AppProcess } from '@service-pay/test-kit';

const exampleDir = fileURLToPath(new URL('../../examples/express-orders/', import.meta.url));

/** The shop's first JSON line says where it listens: `{"listening":"http://127.0.0.1:<port>",...}`. */
function listeningPort(line: string): number | undefined {
  if (!line.startsWith('{')) return undefined;
  const { listening } = JSON.parse(line) as { listening?: string };
  return listening === undefined ? undefined : Number(new URL(listening).port);
}

/** One instance of the Express example shop, as its own Node process; it can be killed and restarted. */
export class ShopProcess {
  private constructor(
    private app: AppProcess,
    readonly url: string,
    private readonly env: Record<string, string>,
  ) {}

  /** What the shop wrote on stderr (the first lines of its current process). */
  get stderr(): string[] {
    return this.app.stderr;
  }

  static async start(env: Record<string, string>): Promise<ShopProcess> {
    const app = await spawnShop({ PORT: '0', ...env });
    return new ShopProcess(app, `http://127.0.0.1:${app.port}`, env);
  }

  /** SIGKILL, as a crash would: requests in flight die with it, its in-memory tally too. */
  kill(): Promise<void> {
    return this.app.kill();
  }

  /** Starts the shop again on the same port, as a process manager would (its tally starts at zero). */
  async restart(): Promise<void> {
    await this.kill();
    this.app = await spawnShop({ ...this.env, PORT: String(this.app.port) });
  }

  async stats(): Promise<{ credited: number; caughtByDatabase: number; rejected: number; injectedFailures: number }> {
    return (await fetch(`${this.url}/stats`)).json() as never;
  }

  stop(): Promise<void> {
    return this.app.stop();
  }
}

function spawnShop(env: Record<string, string>): Promise<AppProcess> {
  return AppProcess.start({ cwd: exampleDir, fixture: 'src/main.ts', env, listening: listeningPort });
}
