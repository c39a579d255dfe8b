import { timerMs } from '@service-pay/core';

/**
 * `prune`'s `olderThanMs`, checked: a number of milliseconds >= 0, or a RangeError naming the store.
 *
 * @example
 * ```ts
 * pruneAge({ olderThanMs: 86_400_000 }, 'KyselyStore'); // 86400000
 * ```
 */
export function pruneAge(options: unknown, store: string): number {
  const olderThanMs = (options as { olderThanMs?: unknown } | null)?.olderThanMs;
  if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new RangeError(
      `${store}.prune: olderThanMs must be a number of milliseconds >= 0, got ${JSON.stringify(olderThanMs)}.`,
    );
  }
  return olderThanMs;
}

/** Rows deleted per statement by `prune`, so a large trim never holds many row locks at once. */
export const PRUNE_BATCH = 5_000;

/** Retry-After for a key another transaction holds: it does not say how long it will take. */
export const IN_PROGRESS_RETRY_MS = 1_000;

/**
 * A duration option that becomes a timer's delay (Prisma's transaction timers), or `fallback` when not
 * given: core's one check (above 0, at most 2,147,483,647, past which a timer fires at once), as a
 * RangeError naming the store and the option.
 *
 * @example
 * ```ts
 * milliseconds(options.transactionTimeoutMs, 60_000, 'PrismaStore', 'transactionTimeoutMs');
 * ```
 */
export function milliseconds(value: unknown, fallback: number, store: string, option: string): number {
  return timerMs(value, fallback, `${store}: ${option}`, { error: (message) => new RangeError(message) });
}
