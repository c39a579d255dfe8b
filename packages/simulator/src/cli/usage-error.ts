/** Exit codes of `service-pay`: 0 done, 1 the work failed (a delivery was refused, a port was taken), 2 bad usage. */
export const EXIT = Object.freeze({ OK: 0, FAILURE: 1, USAGE: 2 });

/** A mistake in the command line or its inputs: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
