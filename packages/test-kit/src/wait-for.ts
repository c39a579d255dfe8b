/** How long a wait may last: an absolute deadline (`Date.now()` ms), or a span from now. */
export type WaitBound = { deadline: number } | { timeoutMs: number };

/**
 * The moment a test's waits must end by: its start plus its timeout, less `reserveMs` for the asserts and
 * clean-up after the wait. A wait bounded by it fails with its own message instead of the test's timeout,
 * and never outlives the test (a loop of N tries x M ms does, on a loaded machine).
 *
 * @example
 * ```ts
 * it('comes back', async ({ task }) => {
 *   const deadline = testDeadline(task);
 *   await waitFor('the client to reconnect', () => client.status === 'ready', { deadline });
 * });
 * ```
 */
export function testDeadline(task: { readonly timeout: number }, reserveMs = 3_000, startedAt = Date.now()): number {
  return startedAt + Math.max(task.timeout - reserveMs, 0);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function deadlineOf(bound: WaitBound): number {
  return 'deadline' in bound ? bound.deadline : Date.now() + bound.timeoutMs;
}

/**
 * Resolves with the first truthy answer of `check`, asked again every `intervalMs`; rejects naming `what`
 * once the bound passes. A check that throws counts as "not yet". A check still running at the deadline is
 * not waited for.
 *
 * @example
 * ```ts
 * await waitFor('redis-server to answer PING', async () => (await ping(port)) === 'PONG', { timeoutMs: 10_000 });
 * ```
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  bound: WaitBound,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = deadlineOf(bound);
  let last: unknown;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let timer: ReturnType<typeof setTimeout> | number | undefined;
    const outOfTime = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, left);
    });
    try {
      const answer = await Promise.race([Promise.resolve().then(check), outOfTime]);
      if (answer) return answer as NonNullable<T>;
    } catch (error) {
      last = error;
    } finally {
      clearTimeout(timer);
    }
    await sleep(Math.min(intervalMs, Math.max(deadline - Date.now(), 0)));
  }
  const why = last === undefined ? '' : ` (last: ${(last as Error).message ?? String(last)})`;
  throw new Error(`timed out waiting for ${what}${why}`);
}

/**
 * Calls `attempt` until `done` accepts its answer, as a sender retries until it is answered, pausing
 * `intervalMs` between tries; returns that answer. Rejects once the bound passes, with the last answer in the
 * message.
 *
 * @example
 * ```ts
 * const answer = await retryUntil('a 200', () => handle(delivery(event)), (r) => r.status === 200, { deadline });
 * ```
 */
export async function retryUntil<T>(
  what: string,
  attempt: () => Promise<T>,
  done: (answer: T) => boolean,
  bound: WaitBound,
  intervalMs = 100,
): Promise<T> {
  let last: T | undefined;
  try {
    return await waitFor(
      what,
      async () => {
        last = await attempt();
        return done(last) ? { answer: last } : undefined;
      },
      bound,
      intervalMs,
    ).then((found) => found.answer);
  } catch (error) {
    throw new Error(`${(error as Error).message}; last answer: ${JSON.stringify(last)}`);
  }
}
