/**
 * A promise a test opens by hand. Two of them park a handler mid-delivery and tell the test it got there,
 * with no timing guess: the handler opens `entered` and awaits `release.opened`.
 *
 * @example
 * ```ts
 * const entered = latch();
 * entered.open();
 * await entered.opened;
 * ```
 */
export interface Latch {
  /** Resolves once `open()` was called. */
  readonly opened: Promise<void>;
  /** Resolves `opened`; later calls do nothing. */
  open(): void;
}

/**
 * A new closed `Latch`.
 *
 * @example
 * ```ts
 * const entered = latch();
 * const release = latch();
 * const handle = handler(async () => { entered.open(); await release.opened; });
 * const first = handle(delivery);
 * await entered.opened; // the first delivery's handler runs now
 * release.open();
 * ```
 */
export function latch(): Latch {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
