import type { DedupeStore } from './dedupe-store.js';
import type { WebhookLogger } from './logger.js';

/** One claim whose lease is being kept alive while its handler runs. */
export class Lease {
  lastExtendedAt: number;
  extending = false;
  lostReason: Error | undefined;
  /** Neighbours in the keeper's list of running leases; see `LeaseKeeper`. */
  previous: Lease | undefined = undefined;
  next: Lease | undefined = undefined;
  kept = false;
  #controller: AbortController | undefined;

  constructor(
    readonly key: string,
    readonly token: string,
  ) {
    this.lastExtendedAt = Date.now();
  }

  /** Created on first use: most handlers never look at it, and an AbortController per request is not free. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.lostReason !== undefined) this.#controller.abort(this.lostReason);
    }
    return this.#controller.signal;
  }

  lose(reason: Error): void {
    this.lostReason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * Keeps the leases of running handlers alive, so a slow credit is not handed to a concurrent retry.
 *
 * One interval per handler (every third of a lease) serves all running deliveries: a timer per request
 * would cost more than the rest of a duplicate's handling. A lease is extended once it is a third old; when
 * the store says it is gone, or no extension has succeeded for a whole lease, its `signal` aborts so the
 * handler can stop before it writes. The interval stops itself when idle and never keeps a process alive.
 *
 * Running leases are a doubly linked list threaded through the leases themselves: every delivery joins and
 * leaves it, and linking two pointers costs less than a Set's hashing (which also reallocates its table as
 * it goes from empty to one entry and back, the common case).
 */
export class LeaseKeeper {
  #first: Lease | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #periodMs: number;

  constructor(
    private readonly store: DedupeStore,
    private readonly leaseMs: number,
    private readonly bounded: <T>(call: Promise<T>, what: string) => Promise<T>,
    private readonly logger: WebhookLogger,
  ) {
    this.#periodMs = Math.max(1, Math.floor(leaseMs / 3));
  }

  keep(key: string, token: string): Lease {
    const lease = new Lease(key, token);
    lease.kept = true;
    lease.next = this.#first;
    if (this.#first !== undefined) this.#first.previous = lease;
    this.#first = lease;
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#periodMs);
      (this.#timer as { unref?: () => void }).unref?.();
    }
    return lease;
  }

  /** Stops keeping `lease` alive; a no-op when it is no longer kept. */
  release(lease: Lease): void {
    if (!lease.kept) return;
    lease.kept = false;
    if (lease.previous === undefined) this.#first = lease.next;
    else lease.previous.next = lease.next;
    if (lease.next !== undefined) lease.next.previous = lease.previous;
    lease.previous = undefined;
    lease.next = undefined;
  }

  /** How many leases are being kept (for tests). */
  get size(): number {
    let n = 0;
    for (let lease = this.#first; lease !== undefined; lease = lease.next) n++;
    return n;
  }

  #tick(): void {
    if (this.#first === undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    // `next` is read first: a store that fails synchronously has `#extend` unlink the lease right away.
    let next: Lease | undefined = this.#first;
    while (next !== undefined) {
      const lease: Lease = next;
      next = lease.next;
      if (!lease.extending && lease.lostReason === undefined && now - lease.lastExtendedAt >= this.#periodMs - 1) {
        void this.#extend(lease);
      }
    }
  }

  async #extend(lease: Lease): Promise<void> {
    lease.extending = true;
    try {
      const held = await this.bounded(this.store.extend(lease.key, lease.token, this.leaseMs), 'extend');
      if (held) lease.lastExtendedAt = Date.now();
      else this.#lose(lease, 'the lease was taken over or expired');
    } catch (error) {
      if (Date.now() - lease.lastExtendedAt >= this.leaseMs) this.#lose(lease, 'the store could not extend it in time');
      else this.logger.warn({ key: lease.key, err: error }, 'Could not extend the lease; will try again');
    } finally {
      lease.extending = false;
    }
  }

  #lose(lease: Lease, why: string): void {
    if (!lease.kept) return;
    this.release(lease);
    const reason = new Error(`Lease on ${lease.key} lost: ${why}. Stop before crediting; the sender will retry.`);
    lease.lose(reason);
    this.logger.error({ key: lease.key }, reason.message);
  }
}
