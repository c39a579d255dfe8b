/**
 * Exit codes of `service-pay`, for scripts: 0 done; 1 the work failed (a delivery got no 2xx, the port is
 * taken, the simulator refused a call); 2 bad usage (unknown command or flag, bad value, bad config);
 * 3 no simulator answered at the URL (`trigger` and `deliveries` talk to a running one).
 */
export const EXIT = Object.freeze({ OK: 0, FAILURE: 1, USAGE: 2, UNREACHABLE: 3 });

/** A mistake in the command line or its inputs: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** No simulator answered where the command looked for one: exit code 3. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}
