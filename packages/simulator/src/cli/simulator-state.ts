import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Where a running `listen` or `simulate` leaves its URL and control token for `trigger` and `deliveries`
 * run from the same folder: beside the dev keys, readable by this user only.
 */
export const STATE_FILE = '.service-pay/simulator.json';

/** The environment variable that gives the control token to `trigger` and `deliveries` directly. */
export const TOKEN_ENV = 'SERVICE_PAY_SIMULATOR_TOKEN';

/** Writes the state file; the returned function removes it again (at stop). */
export async function writeSimulatorState(
  sim: { url: string; controlToken: string; forwardTo?: string | null },
  path = STATE_FILE,
): Promise<() => Promise<void>> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const state = { url: sim.url, controlToken: sim.controlToken, pid: process.pid, forwardTo: sim.forwardTo ?? null };
  await writeFile(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  return () => rm(path, { force: true });
}

/**
 * The control token for the simulator at `baseUrl`: $SERVICE_PAY_SIMULATOR_TOKEN, else the state file's
 * when it names that URL (a file left by another simulator on another port is not used), else none.
 */
export function controlTokenFor(
  baseUrl: string,
  env: NodeJS.ProcessEnv = process.env,
  path = STATE_FILE,
): string | undefined {
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    const state = JSON.parse(readFileSync(resolve(path), 'utf8')) as { url?: unknown; controlToken?: unknown };
    if (state.url === baseUrl && typeof state.controlToken === 'string') return state.controlToken;
  } catch {
    // No file (no simulator started here) or a broken one: no token; the simulator's refusal says what to do.
  }
  return undefined;
}

/**
 * The pid of the simulator the state file names, when it names the one at `baseUrl`: so a second `listen`,
 * or `trigger`, can say which process holds the port.
 *
 * @example
 * ```ts
 * runningSimulatorPid('http://127.0.0.1:4010'); // 12345, or undefined
 * ```
 */
export function runningSimulatorPid(baseUrl: string, path = STATE_FILE): number | undefined {
  try {
    const state = JSON.parse(readFileSync(resolve(path), 'utf8')) as { url?: unknown; pid?: unknown };
    return state.url === baseUrl && typeof state.pid === 'number' ? state.pid : undefined;
  } catch {
    return undefined;
  }
}
