import { resolve } from 'node:path';
import { readHintFile, removeWrittenFile, writePrivateFile } from './private-files.js';

/**
 * Where a running `listen` or `simulate` leaves its URL and control token for `trigger` and `deliveries`
 * run from the same folder: beside the dev keys, readable by this user only.
 */
export const STATE_FILE = '.service-pay/simulator.json';

/** The environment variable that gives the control token to `trigger` and `deliveries` directly. */
export const TOKEN_ENV = 'SERVICE_PAY_SIMULATOR_TOKEN';

/**
 * Writes the state file (mode 0600, in a checked folder of mode 0700, through a new file and a rename, so
 * never through a link planted at its name); the returned function removes it again at stop, only if it
 * is still the file written here.
 *
 * @example
 * ```ts
 * const remove = await writeSimulatorState({ url: sim.url, controlToken: sim.controlToken });
 * await remove();
 * ```
 */
export async function writeSimulatorState(
  sim: { url: string; controlToken: string; forwardTo?: string | null },
  path = STATE_FILE,
): Promise<() => Promise<void>> {
  const state = { url: sim.url, controlToken: sim.controlToken, pid: process.pid, forwardTo: sim.forwardTo ?? null };
  const written = await writePrivateFile(path, `${JSON.stringify(state, null, 2)}\n`);
  return () => removeWrittenFile(written);
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
    const state = JSON.parse(readHintFile(resolve(path)) ?? 'null') as { url?: unknown; controlToken?: unknown };
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
    const state = JSON.parse(readHintFile(resolve(path)) ?? 'null') as { url?: unknown; pid?: unknown };
    return state.url === baseUrl && typeof state.pid === 'number' ? state.pid : undefined;
  } catch {
    return undefined;
  }
}
