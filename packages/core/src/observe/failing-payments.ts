/**
 * The payments whose handler failed recently in this process, with how many times: so a payment's stack is
 * logged once, at its first failure, and each retry that fails the same way gets a short line. A sender
 * retries a failing payment 8 times in about 2 minutes; with the stack on every retry, one bug filled the log
 * with the same 30-line block (7 of 11 blocks in a minute were one payment).
 *
 * Bounded: the least recently failed payment is forgotten first, so a flood of failing payments costs at most
 * `capacity` entries (about 100 bytes each), and a forgotten payment's next failure logs its stack again.
 */
export class FailingPayments {
  // A Map keeps insertion order: re-inserting on every failure makes its first key the least recent.
  readonly #failures = new Map<string, number>();

  constructor(private readonly capacity = 1_000) {}

  /** Counts one more failure of `paymentId` and returns the count (1: its first, log the stack). */
  failed(paymentId: string): number {
    const count = (this.#failures.get(paymentId) ?? 0) + 1;
    this.#failures.delete(paymentId);
    this.#failures.set(paymentId, count);
    if (this.#failures.size > this.capacity) {
      const oldest = this.#failures.keys().next().value;
      if (oldest !== undefined) this.#failures.delete(oldest);
    }
    return count;
  }

  /** The payment was handled after all: a later failure is news again, with its stack. */
  settled(paymentId: string): void {
    this.#failures.delete(paymentId);
  }

  get size(): number {
    return this.#failures.size;
  }
}
