// What every icount script shares (bench/icount, and the packages' own, such as postgres's store count):
// the command line, the warm-up, the markers around the measured operations and the signed deliveries.
import { SECRET, signedBenchEvent } from './bench-event.cjs';

// The command line every icount script shares: `node <script> <contestant> <N> <K>`. The script runs
// WARM_UP operations, then K measured ones between two markers (`markWindow`): bench/icount's count reads
// the instructions between the markers, so start-up, the pool of deliveries (sized from N) and the warm-up
// are not in it. `../shared/tools/icount -n N` (which appends K = N, then 2N, and subtracts the two runs)
// runs the same scripts unchanged: the markers cost the same in both of its runs.
//
// The warm-up: WARM_UP operations before the measured ones, so the measured loop runs in V8's optimized
// tier even at a small N (without it, N = 2,000 counted the handler at 96k against 71.5k at N = 20,000).
// count.mjs lowers V8's tier-up budget so that a short warm-up is enough; the counts at N = 1,000 and
// N = 2,000 then agree to 0.1%, and CI can take a small N.

/** Operations run before the measured loop (not counted: the same in both runs). */
export const WARM_UP = 6_000;

/**
 * Runs a contestant from `contestants` as the command line says. Each contestant is
 * `{ fresh, make(poolSize) => { pool, op } }`: `op(item)` is one operation (it may return a promise); fresh
 * contestants get a distinct pool item per operation, the others the first item every time (after one
 * call that records it).
 */
export async function runContestant(contestants, scriptName) {
  const [name, nText, kText] = process.argv.slice(2);
  const contestant = contestants[name];
  const n = Number(nText);
  const k = Number(kText);
  if (contestant === undefined || !Number.isInteger(n) || n < 1 || !Number.isInteger(k) || k < 1 || k > 2 * n) {
    console.error(`usage: node ${scriptName} <${Object.keys(contestants).join('|')}> <N> <K <= 2N>`);
    process.exit(2);
  }
  // Fresh contestants walk one item per operation: the warm-up, then up to 2N measured, then one spare.
  const poolSize = contestant.fresh ? WARM_UP + 2 * n + 1 : 1;
  const { pool, op } = await contestant.make(poolSize);
  // A full collection before anything runs, so the pool (thousands of Requests for the fetch handler) is in
  // the old generation: left in the young one, the collection that copied it landed inside the measured
  // operations in one run and not the other, and moved the fetch handler's count by 70%. (Not between the
  // warm-up and the measured part: a collection there cost the pipeline its optimized code.)
  globalThis.gc?.();
  const check = (answer) => {
    const status = answer?.status;
    if (status !== undefined && status !== (contestant.status ?? 200)) throw new Error(`${name} answered ${status}`);
  };
  const spare = contestant.fresh ? pool[poolSize - 1] : pool[0];
  check(await op(spare));
  await drive(op, contestant.fresh ? pool : [pool[0]], contestant.fresh, check, WARM_UP, k);
}

/**
 * Marks where the measured operations begin and end: reading `process.ppid` calls the C library's
 * `getppid`, which nothing else in node calls, and the count (bench/icount's count.mjs) has valgrind write
 * its counters out each time that function is entered. About 1,000 instructions, one op's thousandth at
 * N = 1,000. A function that does nothing else, so that the loop reads as what it is.
 */
export function markWindow() {
  return process.ppid;
}

/**
 * The warm-up, a marker, the measured operations, a marker. The markers stand between two calls of the loop,
 * not inside it: a branch to a marker in the loop is one V8 never saw taken during the warm-up, and reaching
 * it threw the optimized loop back to the interpreter, so its compilation landed in the window (Node 24:
 * `verify` 58.6k an operation against 47.0k).
 */
async function drive(op, pool, fresh, check, warmUp, count) {
  await loop(op, pool, fresh, check, 0, warmUp);
  markWindow();
  await loop(op, pool, fresh, check, warmUp, warmUp + count);
  markWindow();
}

/**
 * The loop, in a function of its own that does nothing else. V8 12 and later tier a function up after a
 * budget of bytecodes proportional to its size: in runContestant (setup, argument checks and all) the loop
 * reached Maglev after about 7,000 operations and TurboFan after 8,000, so the compilation (6 ms, tens of
 * millions of instructions) landed in the measured operations, and every count carried it (Node 26: +20k
 * instructions per operation, +45% on verify). This function is small enough to reach its last tier inside
 * the warm-up on every line, and the measured call enters the code the warm-up's call left.
 */
async function loop(op, pool, fresh, check, from, to) {
  for (let i = from; i < to; i++) check(await op(fresh ? pool[i] : pool[0]));
}

// Signed deliveries for the icount scripts: made before any measured loop, the same whatever K is. The
// delivery itself is the one every benchmark sends (@service-pay/bench-kit's bench-event.cjs).

export { SECRET };

/**
 * The signature window the handler scripts verify with: a day, where an app keeps 300 s. The deliveries are
 * signed before the loop, and a count's long run under valgrind on a loaded machine outlasted 300 s (the
 * fetch handler's refused its last deliveries, 401, and the count failed). Read once when the handler is
 * made, so it costs no instruction per delivery.
 */
export const BENCH_TOLERANCE_SEC = 86_400;

/**
 * `count` signed deliveries of distinct payments (about 330 bytes of JSON each), bodies as Buffers. With
 * `eventType`, the same payload under another event type: authentic, verified, then acknowledged unhandled.
 */
export function deliveries(count, eventType = 'payment.paid') {
  return Array.from({ length: count }, (_, i) => {
    const { body, headers } = signedBenchEvent(i, '', eventType, `dl_bench${i}`);
    return { body: Buffer.from(body), headers };
  });
}
