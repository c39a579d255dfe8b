import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * AWS's DynamoDB Local, as shipped inside the npm package amplify-dynamodb-simulator (its emulator/ folder):
 * fetched once with `npm pack` into a cache folder, never part of the workspace's install, and run on
 * the machine's Java (17).
 */
const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';

function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'service-pay', 'dynamodb-local-2.9.30');
}

/** The emulator's folder (DynamoDBLocal.jar and DynamoDBLocal_lib), fetched if missing. */
export function emulatorDir(): string {
  const root = cacheRoot();
  const emulator = join(root, 'package', 'emulator');
  if (existsSync(join(emulator, 'DynamoDBLocal.jar'))) return emulator;
  mkdirSync(join(root, '..'), { recursive: true });
  const staging = mkdtempSync(`${root}.partial-`);
  try {
    execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', staging], { stdio: 'pipe' });
    execFileSync('sh', ['-c', 'tar xzf *.tgz && rm -f *.tgz'], { cwd: staging, stdio: 'pipe' });
    try {
      renameSync(staging, root);
    } catch (error) {
      // Another process put it there first: use theirs.
      if (!existsSync(join(emulator, 'DynamoDBLocal.jar'))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return emulator;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** SIGSTOP: the emulator stops answering, connections stay open. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  port?: number;
  /** Keep the data in this folder (`-sharedDb -dbPath`), so a restarted emulator still has it. */
  dbPath?: string;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

/** Starts DynamoDB Local on a free loopback port (or `port`) and waits until it accepts connections. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const dir = emulatorDir();
  const port = options.port ?? (await freePort());
  const storage = options.dbPath === undefined ? ['-inMemory'] : ['-sharedDb', '-dbPath', options.dbPath];
  const child = spawn(
    'java',
    [
      '-Xmx512m',
      '-Djava.library.path=DynamoDBLocal_lib',
      '-jar',
      'DynamoDBLocal.jar',
      ...storage,
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  live.add(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => live.delete(child));
  const deadline = Date.now() + 60_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`DynamoDB Local did not start on port ${port}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    await exited;
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    process: child,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill,
    stop: kill,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}
