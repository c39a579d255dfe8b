// What every icount script shares (bench/icount, and the packages' own, such as postgres's store count):
// the command line, the warm-up and the signed deliveries.
import { SECRET, signedBenchEvent } from './bench-event.cjs';

// The command line every icount script shares: `node <script> <contestant> <N> <K>`. `../shared/tools/icount
// -n N` appends K (N, then 2N) and subtracts the two runs, so everything here that does not grow with K
// cancels out: the pool of deliveries (sized from N, the same in both runs) and the warm-up.
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
  // One loop for the warm-up and the measured operations: leaving a loop that V8 compiled on the stack
  // (OSR) deoptimizes the caller, and that once cost the pipeline's functions their optimized code.
  await drive(op, contestant.fresh ? pool : [pool[0]], contestant.fresh, check, WARM_UP + k);
}

/**
 * The loop, in a function of its own that does nothing else. V8 12 and later tier a function up after a
 * budget of bytecodes proportional to its size: in runContestant (setup, argument checks and all) the loop
 * reached Maglev after about 7,000 operations and TurboFan after 8,000, so the compilation (6 ms, tens of
 * millions of instructions) landed in the 2N run and not in the N run, and every count carried it (Node
 * 26: +20k instructions per operation, +45% on verify). This function is small enough to reach its last
 * tier inside the warm-up on every line.
 */
async function drive(op, pool, fresh, check, count) {
  for (let i = 0; i < count; i++) check(await op(fresh ? pool[i] : pool[0]));
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
