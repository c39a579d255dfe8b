import type { PaymentLedger } from '../ledger/payment-ledger.js';

/**
 * What `claim` found.
 * - `claimed`: the caller now holds the key's lease and must `complete` or `release` it.
 * - `in-progress`: another attempt holds the lease; try again after `retryAfterMs`.
 * - `completed`: the key was handled before; `fingerprint` is what was handled.
 *
 * @example
 * ```ts
 * const outcome: ClaimOutcome = await store.claim(key, token, fingerprint, 10_000);
 * if (outcome.state === 'completed') console.log('duplicate of', outcome.fingerprint);
 * ```
 */
export type ClaimOutcome =
  | { state: 'claimed' }
  | { state: 'in-progress'; fingerprint: string; retryAfterMs: number }
  | { state: 'completed'; fingerprint: string };

/**
 * A lease store: the storage behind exactly-once handling when the merchant's own writes live elsewhere.
 * One lease per dedupe key, fenced by a token the caller makes; the pipeline keeps the lease alive while the
 * handler runs and records completion afterwards.
 *
 * Outcomes are return values; a method rejects only when the store itself fails (unreachable, broken),
 * which the pipeline answers with 503 STORE_UNAVAILABLE. A store only fails fast: the pipeline owns the one
 * timeout (`storeTimeoutMs`), so a store needs no timer of its own and must not queue or retry commands
 * past it (a claim that lands after the pipeline gave up would hold a lease nobody runs). Every
 * implementation runs the same conformance suite (`@service-pay/core/testing`).
 *
 * What a lease store cannot promise: the handler's writes and the dedupe record live in two systems, so a
 * crash between the handler's commit and `complete` is covered only by an idempotent credit in the
 * merchant's database, or by a `TransactionalStore`, which closes that window completely.
 *
 * @example
 * ```ts
 * class MyStore implements DedupeStore {
 *   async claim(key, token, fingerprint, leaseMs) { return { state: 'claimed' }; }
 *   async complete(key, token, retainMs, fingerprint) { return true; }
 *   async release(key, token) { return true; }
 *   async extend(key, token, leaseMs) { return true; }
 * }
 * ```
 */
export interface DedupeStore {
  /** Lease stores may say so; only transactional stores must declare their kind. */
  readonly kind?: 'lease';
  /**
   * `true` for a store that answers from this process's memory and cannot hang (`MemoryDedupeStore`): the
   * pipeline then calls it without arming its `storeTimeoutMs` timer, which would cost more than the call.
   */
  readonly inProcess?: boolean;
  /**
   * Optional: the operator's ledger of failing payments, in the store's own database. Given, the pipeline
   * records every verified attempt that failed there, apart from the attempt itself (see `PaymentLedger`).
   */
  readonly ledger?: PaymentLedger | undefined;
  /** Takes the lease on `key` for `leaseMs` unless it is held or completed. */
  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome>;
  /**
   * Records the key as completed for `retainMs`, with `fingerprint`, **whatever it finds**: the handler
   * has run and succeeded, so the record must say so. `true` when `token` held the lease, had already
   * completed the key, or the key was gone (the store lost it: expired, evicted, restarted empty); `false`
   * when another token held or had completed it (two attempts ran; the pipeline logs `LEASE_LOST`).
   * Overwriting another holder's lease is deliberate: its next `extend` fails, so a handler that confirms
   * its lease before it commits aborts instead of crediting a second time.
   */
  complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean>;
  /** Gives the lease up so a retry can claim it. `false` when `token` no longer holds it. */
  release(key: string, token: string): Promise<boolean>;
  /** Pushes the lease's end to now + `leaseMs`. `false` when `token` no longer holds it (or the key is gone). */
  extend(key: string, token: string, leaseMs: number): Promise<boolean>;
}
