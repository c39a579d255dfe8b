interface Window {
  until: number;
  suppressed: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Lets the first occurrence of each kind through, then counts: one line per `periodMs` says how many more
 * there were. A scanner that sends a thousand bad signatures a second then costs the merchant's log two
 * lines every ten seconds, and nothing is lost from the count.
 *
 * The flush timer is unref'd: it never keeps a process alive, and a count still pending at exit is lost.
 */
export class RateLimiter {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly periodMs: number,
    /** Called when a window closes with occurrences it held back. */
    private readonly flush: (kind: string, suppressed: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** `true` when this occurrence should be logged now; otherwise it is counted for the next flush. */
  admit(kind: string, now: number = this.now()): boolean {
    const window = this.#windows.get(kind);
    if (window === undefined || now >= window.until) {
      if (window !== undefined) this.#close(kind, window);
      this.#windows.set(kind, { until: now + this.periodMs, suppressed: 0, timer: undefined });
      return true;
    }
    window.suppressed++;
    if (window.timer === undefined) {
      window.timer = setTimeout(() => this.#close(kind, window), Math.max(0, window.until - now));
      (window.timer as { unref?: () => void }).unref?.();
    }
    return false;
  }

  #close(kind: string, window: Window): void {
    clearTimeout(window.timer);
    window.timer = undefined;
    if (this.#windows.get(kind) === window) this.#windows.delete(kind);
    if (window.suppressed > 0) {
      const n = window.suppressed;
      window.suppressed = 0;
      this.flush(kind, n);
    }
  }
}
