import type { ChildProcess } from 'node:child_process';
import { type WaitBound, waitFor } from '../wait-for.js';

/** What `untilAnswers` waits on. */
export interface UntilAnswersOptions {
  /** The server's process: its exit ends the wait at once, with `output` in the error. */
  process: ChildProcess;
  /** Names the server in errors. */
  what: string;
  /** What the process printed so far, for the error. */
  output: () => string;
  bound: WaitBound;
  init?: RequestInit;
  /** How long one request may take (a first page render can be slow). Default 2 s. */
  requestTimeoutMs?: number;
}

/**
 * The first HTTP answer of `url` (any status: the server is up), asked every 100 ms with each request
 * bounded (`requestTimeoutMs`); rejects at once when the process exits, and when the bound passes. A server that accepts
 * and never answers cannot hold the wait past its bound.
 *
 * @example
 * ```ts
 * await untilAnswers(`http://127.0.0.1:${port}/`, { process: child, what: 'next start', output, bound: { timeoutMs: 60_000 } });
 * ```
 */
export async function untilAnswers(url: string, options: UntilAnswersOptions): Promise<Response> {
  const exited = () => options.process.exitCode !== null || options.process.signalCode !== null;
  const found = await waitFor(
    `${options.what} to answer ${url}`,
    async () => {
      if (exited()) return { exited: true as const };
      const response = await fetch(url, {
        ...options.init,
        signal: AbortSignal.timeout(options.requestTimeoutMs ?? 2_000),
      });
      return { response };
    },
    options.bound,
    100,
  ).catch((error: Error) => {
    throw new Error(`${error.message}:\n${options.output()}`);
  });
  if ('exited' in found) throw new Error(`${options.what} exited before it answered:\n${options.output()}`);
  return found.response;
}
