import { cryptoBackend } from '#crypto';

/**
 * Claim tokens fence a lease: only the attempt that claimed a key may complete, release or extend it. They
 * must be unique across every process sharing a store, and never leave it, so they need not be secret.
 * One random prefix per handler (60 random bits) plus a counter gives that for the price of a string
 * concatenation, where a fresh random UUID per delivery was a measurable part of a delivery's cost; short,
 * because a completed record keeps the token that completed it.
 *
 * The prefix is drawn on first use, not when the handler is made: Cloudflare's workerd refuses random
 * numbers at module scope, where `serviceWebhook(...)` is usually called.
 */
export class ClaimTokens {
  #prefix: string | undefined;
  #issued = 0;

  next(): string {
    this.#prefix ??= `${cryptoBackend.randomToken().replaceAll('-', '').slice(0, 16)}.`;
    this.#issued++;
    return this.#prefix + this.#issued.toString(36);
  }
}
