// Instructions per operation, counted by valgrind: the method of `../shared/tools/icount`, in the repository
// so that CI (a fresh clone, no shared tools beside it) counts exactly as developers do.
//
// A script runs its operation K times (K is its last argument). It runs twice, with K = N and K = 2N, under
// `node --predictable --single-threaded` (V8 compiles on the main thread, so two identical runs differ by
// about 0.001%), and one operation is (I(2N) - I(N)) / N: start-up, setup and warm-up cancel out.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** MB: more than 2N = 4,000 of the costliest operation (the fetch handler) allocate. */
const SEMI_SPACE_MB = 128;

/** How node runs under valgrind for a count (and for `per-function.mjs`, so its counts are the same runs'). */
export const NODE_FLAGS = [
  '--predictable',
  '--single-threaded',
  // Tier-up after a sixteenth of the usual work, so a short warm-up (bench-kit's icount.mjs) reaches the
  // optimized code: with the default, the handler's last functions were compiled after 22,000 deliveries.
  '--interrupt-budget=8192',
  '--expose-gc',
  // A young generation large enough that the warm-up and 2N operations rarely fill it: each run pays a
  // whole number of collections, and at a small N one more or fewer moved a count by 20%.
  `--min-semi-space-size=${SEMI_SPACE_MB}`,
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
];

/** Instructions of one whole run of `node <args>`, as cachegrind's `I refs`. */
async function instructions(args) {
  const { stderr } = await run(
    'valgrind',
    [
      '--tool=cachegrind',
      '--cache-sim=no',
      '--cachegrind-out-file=/dev/null',
      process.execPath,
      ...NODE_FLAGS,
      ...args,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const match = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (match === null) throw new Error(`no instruction count from valgrind for node ${args.join(' ')}:\n${stderr}`);
  return Number(match[1].replaceAll(',', ''));
}

/**
 * The two runs one operation's count is made of: instructions of the whole process at K = N (`once`) and at
 * K = 2N (`twice`), run side by side.
 */
export async function runPair(script, args, n) {
  const [once, twice] = await Promise.all([
    instructions([script, ...args, String(n)]),
    instructions([script, ...args, String(2 * n)]),
  ]);
  return { once, twice };
}

/** One operation's instructions from one pair of runs: `twice` less `once`, over N. */
export function perOperation({ once, twice }, n) {
  return Math.round((twice - once) / n);
}

/** Whether valgrind can be run here. */
export async function hasValgrind() {
  try {
    await run('valgrind', ['--version']);
    return true;
  } catch {
    return false;
  }
}
