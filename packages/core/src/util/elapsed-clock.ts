/**
 * A clock that reads milliseconds since its first reading.
 *
 * Why relative: times kept in objects (a lease's end, an attempt's start) stay V8 small integers instead of
 * boxed numbers, and the memory store packs expiries into 40 bits (34 years from the first reading).
 * Why from the first reading and not from construction: Cloudflare Workers freeze the clock at 0 (1970)
 * while a module's top level runs, where apps make their handlers and stores; an origin taken there made
 * every later reading 56 years, past the 40 bits, and every completed key read as expired (found by the
 * runtime matrix: duplicates credited again on workerd).
 *
 * @example
 * ```ts
 * const elapsed = elapsedClock(Date.now);
 * elapsed(); // 0
 * ```
 */
export function elapsedClock(clock: () => number): () => number {
  let origin: number | undefined;
  return () => {
    const now = clock();
    if (origin === undefined) origin = now;
    return now - origin;
  };
}
