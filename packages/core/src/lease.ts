import type { DedupeStore } from './dedupe-store.js';
import type { WebhookLogger } from './logger.js';

/** One claim whose lease is being kept alive while its handler runs. */
export class Lease {
  lastExtendedAt: number;
  extending = false;
  lostReason: Error | undefined;
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
 */
export class LeaseKeeper {
  readonly #active = new Set<Lease>();
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
    this.#active.add(lease);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#periodMs);
      (this.#timer as { unref?: () => void }).unref?.();
    }
    return lease;
  }

  release(lease: Lease): void {
    this.#active.delete(lease);
  }

  #tick(): void {
    if (this.#active.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    for (const lease of this.#active) {
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
    if (!this.#active.has(lease)) return;
    this.#active.delete(lease);
    const reason = new Error(`Lease on ${lease.key} lost: ${why}. Stop before crediting; the sender will retry.`);
    lease.lose(reason);
    this.logger.error({ key: lease.key }, reason.message);
  }
}
