/**
 * Why a store call was given up: it did not answer within `storeTimeoutMs`. The call may still land later;
 * the pipeline makes up for that (a late claim is released, a late transaction rolled back).
 */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
}

/**
 * The pipeline's one bound on a store call: stores only fail fast, and this is the only timer. The call is
 * made by the caller, inside its own try (a store that throws synchronously is an outage, never a crash).
 */
export function bounded<T>(pending: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreTimeoutError(`The store did not answer ${what} within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    Promise.resolve(pending).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
