// Instructions per operation, counted by valgrind, in the repository so that CI (a fresh clone, no shared
// tools beside it) counts exactly as developers do.
//
// A script runs a warm-up, then its operation K times between two markers (bench-kit's icount.mjs:
// `markWindow`, a call to the C library's `getppid`). It runs once, with K = N, under callgrind told to
// write its counters out each time `getppid` is entered (`--dump-before`), and under `node --predictable
// --single-threaded` (V8 compiles on the main thread, so two identical runs differ by about 0.001%). The
// counters between the two markers over N are one operation: start-up, the pool of deliveries and the
// warm-up are before the first marker. This is what `../shared/tools/icount` gets by running the script
// twice (K = N and K = 2N) and subtracting, at half the work: one process of W + N operations instead of
// two of W + N and W + 2N, where the warm-up (W = 6,000) and node's start-up under valgrind are most of it.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** MB: more than the warm-up and N = 1,000 of the costliest operation (the fetch handler) allocate. */
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
  // A young generation large enough that the warm-up and N operations rarely fill it: a collection inside
  // the measured window or outside it moved a count at a small N by 20%.
  `--min-semi-space-size=${SEMI_SPACE_MB}`,
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
];

/**
 * The C function the scripts' markers call (bench-kit's `markWindow`): node calls it for nothing else, so
 * the run's counters are written out exactly twice, at the start and at the end of the measured operations.
 */
export const MARKER_FUNCTION = 'getppid';

/**
 * Runs `node <args>` under callgrind (`extraNodeFlags` before the node flags above) and gives the path of the
 * counters written between the two markers: the measured operations' own, function by function. `callgrind
 * --dump-before` writes `out.1` at the first marker (start-up, pool, warm-up), `out.2` at the second (the
 * measured part) and `out` at the exit. The caller reads the file and removes `directory`.
 */
export async function countMarkedWindow(directory, args, extraNodeFlags = []) {
  const out = join(directory, 'callgrind.out');
  await run(
    'valgrind',
    [
      '--tool=callgrind',
      `--dump-before=${MARKER_FUNCTION}`,
      `--callgrind-out-file=${out}`,
      COUNTED_NODE,
      ...extraNodeFlags,
      ...NODE_FLAGS,
      ...args,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const parts = (await readdir(directory)).filter((name) => /^callgrind\.out\.\d+$/.test(name));
  // Exactly two markers: fewer means the script never reached its measured loop's end; more, that something
  // else in node called the marker's function and the window is not the operations'.
  if (!parts.includes('callgrind.out.2') || parts.includes('callgrind.out.3')) {
    throw new Error(
      `node ${args.join(' ')} did not call ${MARKER_FUNCTION} exactly twice (wrote ${parts.sort().join(', ') || 'no part'}): is it a bench-kit icount script?`,
    );
  }
  return join(directory, 'callgrind.out.2');
}

/**
 * Instructions of one operation of `node <script> <args> <N> <K = N>` (the command line of bench-kit's icount
 * scripts): the marked window over N, one run.
 */
export async function countPerOperation(script, args, n) {
  const directory = await mkdtemp(join(tmpdir(), 'icount-'));
  try {
    const window = await readFile(await countMarkedWindow(directory, [script, ...args, String(n), String(n)]), 'utf8');
    const totals = /^totals: (\d+)$/m.exec(window) ?? /^summary: (\d+)$/m.exec(window);
    if (totals === null) throw new Error(`callgrind wrote no totals for node ${script} ${args.join(' ')}`);
    return Math.round(Number(totals[1]) / n);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
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
