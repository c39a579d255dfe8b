/** Rejection of a store call that did not answer in time. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
}

/**
 * Rejects with `StoreTimeoutError` when `promise` has not settled within `ms`.
 *
 * Fast path: a store that answers from memory has settled by the next microtask, and for it no timer is
 * armed at all (a timer per store call was a measurable share of the handler's cost).
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  promise.then(mark, mark);
  await undefined;
  if (settled) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
