/**
 * What `claim` found.
 * - `claimed`: the caller now holds the key's lease and must `complete` or `release` it.
 * - `in-progress`: another delivery holds the lease; try again after `retryAfterMs`.
 * - `completed`: the key was handled before; `fingerprint` is what was handled.
 *
 * @example
 * ```ts
 * const outcome: ClaimOutcome = await store.claim(key, token, fingerprint, 60_000);
 * if (outcome.state === 'completed') console.log('duplicate of', outcome.fingerprint);
 * ```
 */
export type ClaimOutcome =
  | { state: 'claimed' }
  | { state: 'in-progress'; fingerprint: string; retryAfterMs: number }
  | { state: 'completed'; fingerprint: string };

/**
 * The storage behind exactly-once handling: a lease per dedupe key, fenced by a caller-made token.
 *
 * Outcomes are return values; a method rejects only when the store itself fails (unreachable, timed
 * out), which the pipeline answers with 503 STORE_UNAVAILABLE so the sender retries later. Every
 * implementation runs the same conformance suite (`@service-pay/core/testing`).
 *
 * @example
 * ```ts
 * class MyStore implements DedupeStore {
 *   async claim(key, token, fingerprint, leaseMs) { return { state: 'claimed' }; }
 *   async complete(key, token, retainMs) { return true; }
 *   async release(key, token) { return true; }
 *   async extend(key, token, leaseMs) { return true; }
 * }
 * ```
 */
export interface DedupeStore {
  /** Takes the lease on `key` for `leaseMs` unless it is held or completed. */
  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome>;
  /** Marks the key completed for `retainMs`. `false` when `token` no longer holds the lease. */
  complete(key: string, token: string, retainMs: number): Promise<boolean>;
  /** Gives the lease up so a retry can claim it. `false` when `token` no longer holds it. */
  release(key: string, token: string): Promise<boolean>;
  /** Pushes the lease's end to now + `leaseMs`. `false` when `token` no longer holds it. */
  extend(key: string, token: string, leaseMs: number): Promise<boolean>;
}
