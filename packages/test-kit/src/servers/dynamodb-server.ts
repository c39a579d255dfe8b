import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.js';
import { killOnExit } from '../processes/kill-on-exit.js';
import { waitFor } from '../wait-for.js';

/**
 * AWS's DynamoDB Local, as shipped inside the npm package amplify-dynamodb-simulator (its emulator/ folder):
 * fetched once with `npm pack` into a cache folder, never part of the workspace's install, and run on
 * the machine's Java (17).
 */
const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';

function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'service-pay', 'dynamodb-local-2.9.30');
}

/**
 * The emulator's folder (DynamoDBLocal.jar and DynamoDBLocal_lib), fetched with `npm pack` if missing.
 * Processes racing to fetch it each stage their own copy; the first one renamed into place wins.
 *
 * @example
 * ```ts
 * const jar = join(emulatorDir(), 'DynamoDBLocal.jar');
 * ```
 */
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

/** A running DynamoDB Local of the test's own. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, for the AWS SDK client's `endpoint`. */
  readonly endpoint: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** SIGSTOP: the emulator stops answering, connections stay open. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, and waits for the exit: a crash. */
  kill(): Promise<void>;
  /** Ends it (as `kill`: the emulator keeps nothing that a clean stop would save). Safe to call twice. */
  stop(): Promise<void>;
}

/** What a DynamoDB Local of the test's own runs with. */
export interface DynamoDbLocalOptions {
  /** The port to listen on (the same one, to restart a killed emulator). Default: a free port. */
  port?: number;
  /** Keep the data in this folder (`-sharedDb -dbPath`), so a restarted emulator still has it. Default: in memory. */
  dbPath?: string;
  /** How long Java may take to accept connections. Default 60 s (a cold JVM on a loaded 2-core machine). */
  startTimeoutMs?: number;
}

/**
 * Starts DynamoDB Local (on Java, fetched once by `emulatorDir`) on a free loopback port, or `port`, and
 * waits until it accepts connections; rejects with its output if it exits first or does not start in time.
 * No emulator outlives the test run, paused or not.
 *
 * @example
 * ```ts
 * const emulator = await startDynamoDbLocal();
 * const client = new DynamoDBClient({ endpoint: emulator.endpoint, region: 'us-east-1' });
 * await emulator.stop();
 * ```
 */
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
  let output = '';
  // No Java on the PATH is an 'error' event, not an exit: without a listener it would end the process with
  // a bare ENOENT. It is said as what to install instead.
  let spawnFailed = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error: NodeJS.ErrnoException) => {
      spawnFailed = true;
      output += `could not run java (${error.code ?? error.message}): DynamoDB Local needs Java 17 or newer on the PATH (Debian: apt-get install openjdk-17-jre-headless)\n`;
      resolve();
    });
  });
  child.once('exit', killOnExit(child));
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const kill = async () => {
    if (!spawnFailed && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    await exited;
  };
  try {
    const state = await waitFor(
      `DynamoDB Local to accept connections on ${port}`,
      // An exit ends the wait at once: the output says why (the port taken, no Java).
      async () =>
        spawnFailed || child.exitCode !== null || child.signalCode !== null ? 'exited' : (await accepts(port)) && 'up',
      { timeoutMs: options.startTimeoutMs ?? 60_000 },
      100,
    );
    if (state === 'exited') throw new Error(`DynamoDB Local exited on port ${port}`);
  } catch (error) {
    await kill();
    throw new Error(`${(error as Error).message}:\n${output}`);
  }
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
