// Instructions per operation, counted by valgrind: the method of `../shared/tools/icount`, in the repository
// so that CI (a fresh clone, no shared tools beside it) counts exactly as developers do.
//
// A script runs its operation K times (K is its last argument). It runs twice, with K = N and K = 2N, under
// `node --predictable --single-threaded` (V8 compiles on the main thread, so two identical runs differ by
// about 0.001%), and one operation is (I(2N) - I(N)) / N: start-up, setup and warm-up cancel out.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** MB: more than 2N = 4,000 of the costliest operation (the fetch handler) allocate. */
const SEMI_SPACE_MB = 128;

/**
 * The node that is counted: `BENCH_NODE` (a path, e.g. from `node scripts/node-lines.mjs bin 24`), else the
 * one running this script. Every supported line is counted with its own binary and against its own baseline.
 */
export const COUNTED_NODE = process.env.BENCH_NODE || process.execPath;

/** The counted node's version (`24.22.3`) and the names of the V8 flags it takes. */
function describeNode(node) {
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const v8Options = execFileSync(node, ['--v8-options'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return { version, v8Flags: new Set(v8Options.match(/^ {2}--[a-z0-9-]+/gm).map((flag) => flag.trim())) };
}

export const COUNTED = describeNode(COUNTED_NODE);

/** The counted node's major: its baseline's key. */
export const COUNTED_LINE = COUNTED.version.split('.')[0];

/**
 * Tier-up after about an eighth of V8's usual work, so a short warm-up (bench-kit's icount.mjs) reaches the
 * optimized code: with the default, the handler's last functions were compiled after 22,000 deliveries.
 * V8 11 (Node 20) counts that work as an interrupt budget (default 67,584; taken as 8,192); V8 12 and later
 * (Node 22 on) count invocations and refuse the old flag at start-up, so each line gets the flags it knows.
 */
function tierUpFlags({ v8Flags }) {
  if (v8Flags.has('--interrupt-budget')) return ['--interrupt-budget=8192'];
  const flags = [];
  // Defaults on V8 12-14: TurboFan after 3,000 invocations, Maglev after 400.
  if (v8Flags.has('--invocation-count-for-turbofan')) flags.push('--invocation-count-for-turbofan=375');
  if (v8Flags.has('--invocation-count-for-maglev')) flags.push('--invocation-count-for-maglev=50');
  return flags;
}

/** How node runs under valgrind for a count (and for `per-function.mjs`, so its counts are the same runs'). */
export const NODE_FLAGS = [
  '--predictable',
  '--single-threaded',
  ...tierUpFlags(COUNTED),
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
    ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', COUNTED_NODE, ...NODE_FLAGS, ...args],
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
