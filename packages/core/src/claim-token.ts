import { cryptoBackend } from '#crypto';

/**
 * Claim tokens fence a lease: only the delivery that claimed a key may complete, release or extend it. They
 * must be unique across every process sharing a store, and never leave it, so they need not be secret.
 * One random prefix per handler plus a counter gives that for the price of a string concatenation, where
 * a fresh random UUID per delivery was a measurable part of a delivery's cost.
 */
export class ClaimTokens {
  readonly #prefix = `${cryptoBackend.randomToken()}.`;
  #issued = 0;

  next(): string {
    this.#issued++;
    return this.#prefix + this.#issued.toString(36);
  }
}
