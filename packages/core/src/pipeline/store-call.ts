/**
 * Why a store call was given up: it did not answer within `storeTimeoutMs`. The call may still land later;
 * the pipeline makes up for that (a late claim is released, a late transaction rolled back).
 */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
}

/** A store call in flight: when it is given up, and how; linked in the order the calls were made. */
interface PendingCall {
  readonly deadline: number;
  readonly what: string;
  readonly reject: (error: unknown) => void;
  previous: PendingCall | undefined;
  next: PendingCall | undefined;
  linked: boolean;
}

/**
 * The pipeline's one bound on store calls: stores only fail fast, and this is the only timer. One timer for
 * every call in flight, not one per call: the timeout is the same for all of them, so deadlines come in
 * the order the calls were made, and only the oldest call's needs a timer. A call that answers leaves the
 * list (two pointers); the timer, when it fires, gives up every call past its deadline and is set again for
 * the oldest one left. Arming and clearing a Node timer per call cost more than the rest of a Redis
 * duplicate's client-side bookkeeping (icount, bench/README.md).
 *
 * The call is made by the caller, inside its own try (a store that throws synchronously is an outage, never
 * a crash). Like a pending `setTimeout`, an armed deadline keeps the process alive while a call is out, and
 * only then: when the last call in flight answers, the timer is unref'd (an idle process may exit), and it
 * is ref'd again by the next call. Not cleared: re-arming a Node timer per call is what the one timer saves;
 * when it fires with nothing in flight it simply stops.
 */
export class StoreDeadlines {
  #first: PendingCall | undefined;
  #last: PendingCall | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (the clock of `now`). */
  #armedFor = 0;

  constructor(
    readonly timeoutMs: number,
    readonly now: () => number,
  ) {}

  /** `pending`'s answer, or a StoreTimeoutError once `timeoutMs` has passed without one. */
  bound<T>(pending: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call: PendingCall = {
        deadline: this.now() + this.timeoutMs,
        what,
        reject,
        previous: this.#last,
        next: undefined,
        linked: true,
      };
      if (this.#last === undefined) this.#first = call;
      else this.#last.next = call;
      this.#last = call;
      if (this.#timer === undefined) this.#arm(call.deadline);
      else if (call.previous === undefined) refTimer(this.#timer, true); // idle until now: keep alive again
      Promise.resolve(pending).then(
        (value) => {
          this.#unlink(call);
          resolve(value);
        },
        (error: unknown) => {
          this.#unlink(call);
          reject(error);
        },
      );
    });
  }

  #unlink(call: PendingCall): void {
    if (!call.linked) return;
    call.linked = false;
    if (call.previous === undefined) this.#first = call.next;
    else call.previous.next = call.next;
    if (call.next === undefined) this.#last = call.previous;
    else call.next.previous = call.previous;
    // Nothing in flight: the timer must not keep an idle process alive until it fires.
    if (this.#first === undefined && this.#timer !== undefined) refTimer(this.#timer, false);
  }

  #arm(deadline: number): void {
    this.#armedFor = deadline;
    this.#timer = setTimeout(() => this.#expire(), Math.max(1, deadline - this.now()));
  }

  #expire(): void {
    this.#timer = undefined;
    const now = this.now();
    // A timer can fire a little early by this clock (its own rounds differently): never give up a call
    // before its deadline, and never spin on a timer of 0 ms.
    const cutoff = Math.max(now, this.#armedFor);
    while (this.#first !== undefined && this.#first.deadline <= cutoff) {
      const call = this.#first;
      this.#unlink(call);
      call.reject(new StoreTimeoutError(`The store did not answer ${call.what} within ${this.timeoutMs} ms.`));
    }
    if (this.#first !== undefined) this.#arm(this.#first.deadline);
  }
}

/** `ref()` or `unref()` where timers have them (Node, Bun, Deno); a no-op where a timer is a number. */
function refTimer(timer: ReturnType<typeof setTimeout>, keepAlive: boolean): void {
  const t = timer as { ref?: () => void; unref?: () => void };
  if (keepAlive) t.ref?.();
  else t.unref?.();
}

/** Waits `ms` without keeping the process alive (background retries must not hold a shutdown). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });
}

/** 100 ms, doubling, at most `capMs`: the wait before background retry number `n` (from 0). */
export function backoffMs(n: number, capMs: number): number {
  return Math.min(capMs, 100 * 2 ** Math.min(n, 16));
}
