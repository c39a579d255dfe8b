/** Rejection of a store call that did not answer in time. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
}

/**
 * Rejects with `StoreTimeoutError` when `promise` has not settled within `ms`. Used for stores that talk to
 * a server; the in-process `MemoryDedupeStore` cannot hang and is not wrapped at all (handler-options.ts).
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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
