import type { DedupeStore } from './dedupe-store.js';
import type { WebhookLogger } from './logger.js';
import { withTimeout } from './with-timeout.js';

/**
 * Keeps a claim's lease alive while the merchant's handler runs, so a slow credit is not handed to a
 * concurrent retry. Extends every third of the lease; when the store says the lease is gone, or no
 * extension has succeeded for a whole lease, `signal` aborts so the handler can stop before it writes.
 */
export class LeaseKeeper {
  #controller: AbortController | undefined;
  #lostReason: Error | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastExtendedAt: number;

  constructor(
    private readonly store: DedupeStore,
    private readonly key: string,
    private readonly token: string,
    private readonly leaseMs: number,
    private readonly timeoutMs: number,
    private readonly logger: WebhookLogger,
  ) {
    this.#lastExtendedAt = Date.now();
    this.#timer = setInterval(() => void this.#extend(), Math.max(1, Math.floor(leaseMs / 3)));
    // Never keep a process alive just to extend a lease.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /**
   * Created on first use: most handlers never look at it, and an AbortController per request is not free.
   */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lostReason !== undefined) this.#controller.abort(this.#lostReason);
    }
    return this.#controller.signal;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #extend(): Promise<void> {
    if (this.#timer === undefined) return;
    try {
      const held = await withTimeout(this.store.extend(this.key, this.token, this.leaseMs), this.timeoutMs, 'extend');
      if (held) {
        this.#lastExtendedAt = Date.now();
        return;
      }
      this.#lose('the lease was taken over or expired');
    } catch (error) {
      if (Date.now() - this.#lastExtendedAt >= this.leaseMs) this.#lose('the store could not extend the lease in time');
      else this.logger.warn({ key: this.key, err: error }, 'Could not extend the lease; will try again');
    }
  }

  #lose(why: string): void {
    if (this.#timer === undefined) return;
    this.stop();
    this.#lostReason = new Error(`Lease on ${this.key} lost: ${why}. Stop before crediting; the sender will retry.`);
    this.#controller?.abort(this.#lostReason);
    this.logger.error({ key: this.key }, this.#lostReason.message);
  }
}
