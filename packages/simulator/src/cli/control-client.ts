import { CONTROL_TOKEN_HEADER } from '../http/control-access.js';
import { withoutTrailingSlashes } from './args.js';
import { controlTokenFor, TOKEN_ENV } from './simulator-state.js';
import { UnreachableError } from './usage-error.js';

/** Where `trigger` and `deliveries` look for a running simulator unless told otherwise. */
export const DEFAULT_SIMULATOR_URL = 'http://127.0.0.1:4010';

/** A refusal from the simulator's control API: its code and message, printed as they came (exit 1). */
export class ControlApiError extends Error {
  override readonly name = 'ControlApiError';
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The base URL a command talks to: the flag, else SERVICE_PAY_SIMULATOR_URL, else the default port. */
export function simulatorUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return withoutTrailingSlashes(flag ?? env.SERVICE_PAY_SIMULATOR_URL ?? DEFAULT_SIMULATOR_URL);
}

/**
 * One call to the control API of a running simulator. Nothing listening (or something that is not a
 * simulator) is an UnreachableError, so scripts can tell "no simulator" (exit 3) from "it said no" (exit 1).
 */
export async function callControl<T>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    const token = controlTokenFor(baseUrl);
    res = await fetch(`${baseUrl}/_simulator${path}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { [CONTROL_TOKEN_HEADER]: token }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new UnreachableError(
      `no simulator answered at ${baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message}); start one with 'npx service-pay listen --forward-to URL' or 'npx service-pay simulate', or point --simulator at it`,
    );
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UnreachableError(`${baseUrl} answered, but not as a service-pay simulator (HTTP ${res.status})`);
  }
  if (!res.ok) {
    const { error, message } = (parsed ?? {}) as { error?: unknown; message?: unknown };
    if (typeof error !== 'string')
      throw new UnreachableError(`${baseUrl} answered, but not as a service-pay simulator (HTTP ${res.status})`);
    const said = typeof message === 'string' ? message : error;
    if (error === 'CONTROL_TOKEN_REQUIRED') {
      throw new ControlApiError(
        error,
        res.status,
        `${said} Run this command in the folder where 'npx service-pay listen' (or simulate) runs, or set ${TOKEN_ENV} to the token it printed.`,
      );
    }
    throw new ControlApiError(error, res.status, said);
  }
  return parsed as T;
}
