// The speed budget CI holds the hot paths to: every budgeted operation (operations.mjs) is counted and
// compared with bench/icount/baseline.json; more than 2% over its baseline fails (exit 1). Each Node line
// keeps a baseline of its own (V8 compiles the same code to different instruction counts), keyed by the
// major of the node counted: `BENCH_NODE=/path/to/node`, else the node running this script. Instruction
// counts repeat to about 0.001% on any machine, loaded or not, but one run can pay inside its measured
// window for an event another run paid outside it, or not at all (a collection, a function thrown back to
// the interpreter and compiled again, the C library's allocator searching its free lists longer), and that
// moves a count at N = 1,000 by its cost over N. A count outside its limit is taken four times more and
// the operation is the median of the five: a regression is in every count, such an event in one or two.
// A change that must cost more updates the baseline in the same commit (`--update`), and says why in the
// commit message.
//
//   node bench/icount/check-budget.mjs            # count, print the table, exit 1 on a regression
//   node bench/icount/check-budget.mjs --update   # count and write the baseline
//   node bench/icount/check-budget.mjs verify     # only the operations named
//   BENCH_NODE=$(node scripts/node-lines.mjs bin 24) node bench/icount/check-budget.mjs   # Node 24's budget
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COUNTED, COUNTED_LINE, hasValgrind } from './count.mjs';
import { countOperation, countOperations, OPERATIONS } from './operations.mjs';

const baselinePath = join(dirname(fileURLToPath(import.meta.url)), 'baseline.json');
const update = process.argv.includes('--update');
const baselines = JSON.parse(readFileSync(baselinePath, 'utf8'));
const { n, tolerance } = baselines;
baselines.lines[COUNTED_LINE] ??= { node: COUNTED.version, operations: {} };
/** This line's counts, and the release they were counted on. */
const baseline = baselines.lines[COUNTED_LINE];
const named = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
// Named: those. Else every budgeted operation: each line is held to the same rows, and a row its baseline
// lacks fails the check (below) rather than going unchecked.
const names = Object.keys(OPERATIONS).filter(
  (name) => OPERATIONS[name].budget && (named.length === 0 || named.includes(name)),
);
if (named.some((name) => !names.includes(name))) {
  console.error(
    `usage: check-budget.mjs [--update] [${Object.keys(OPERATIONS)
      .filter((k) => OPERATIONS[k].budget)
      .join(' ')}]`,
  );
  process.exit(2);
}

if (!(await hasValgrind())) {
  console.error('icount budget: valgrind is missing (apt-get install -y valgrind).');
  process.exit(2);
}

/** How many counts an operation is taken when its first lands outside its limit. */
const RECOUNTS = 5;

const started = Date.now();
// Every row once, two at a time (each count is one single-threaded process).
const first = await countOperations(names, n, { concurrency: 2 });
const rows = [];
for (const name of names) {
  const was = baseline.operations[name];
  const limit = baselines.tolerances?.[name] ?? tolerance;
  const counts = [first.get(name)];
  // Outside its limit either way (see above): four counts more, and the median of five is the row's.
  if (was !== undefined && Math.abs(counts[0] / was - 1) > limit) {
    const more = await Promise.all(Array.from({ length: RECOUNTS - 1 }, () => countOperation(name, n)));
    counts.push(...more);
  }
  const now = counts.toSorted((a, b) => a - b)[(counts.length - 1) / 2];
  rows.push({ name, was, now, counts, limit, change: was === undefined ? undefined : now / was - 1 });
  if (update) {
    // Written as each row lands, so that a run cut short keeps what it counted. Read again first: the
    // lines are counted side by side, and each writes only its own.
    const latest = JSON.parse(readFileSync(baselinePath, 'utf8'));
    latest.lines[COUNTED_LINE] ??= { node: COUNTED.version, operations: {} };
    latest.lines[COUNTED_LINE].operations[name] = now;
    latest.lines[COUNTED_LINE].node = COUNTED.version;
    writeFileSync(baselinePath, `${JSON.stringify(latest, null, 2)}\n`);
  }
}

const pct = (change) => (change === undefined ? 'new' : `${change >= 0 ? '+' : ''}${(change * 100).toFixed(2)}%`);
const num = (value) => (value === undefined ? '-' : value.toLocaleString('en-US'));
console.log(
  `icount budget, Node ${COUNTED.version} (baseline counted on ${baseline.node}; N = ${n}, fail above +${tolerance * 100}%, ${((Date.now() - started) / 1000).toFixed(0)} s)`,
);
console.log(`${'operation'.padEnd(20)} ${'baseline'.padStart(9)} ${'now'.padStart(9)} ${'change'.padStart(8)}`);
for (const { name, was, now, counts, change, limit } of rows) {
  const verdict =
    change !== undefined && change > limit ? '  OVER BUDGET' : limit !== tolerance ? `  (limit +${limit * 100}%)` : '';
  const recounted =
    counts.length > 1 ? `  (counted ${counts.length} times: ${counts.map(num).join(', ')}; the median kept)` : '';
  console.log(
    `${name.padEnd(20)} ${num(was).padStart(9)} ${num(now).padStart(9)} ${pct(change).padStart(8)}${verdict}${recounted}`,
  );
}

if (update) {
  console.log(`baseline written: ${baselinePath}`);
  process.exit(0);
}
const over = rows.filter(({ change, limit }) => change !== undefined && change > limit);
const missing = rows.filter(({ was }) => was === undefined);
if (missing.length > 0) {
  console.log(
    `no Node ${COUNTED_LINE} baseline for ${missing.map((r) => r.name).join(', ')}: run it with --update on that line and commit baseline.json.`,
  );
  process.exit(1);
}
if (over.length > 0) {
  console.log(
    `${over.map((r) => r.name).join(', ')} grew more than ${Math.max(...over.map((r) => r.limit)) * 100}% over the baseline. Make it cheaper, or, if it must cost more, update bench/icount/baseline.json (--update) in the same commit and say why.`,
  );
  process.exit(1);
}
const cheaper = rows.filter(({ change, limit }) => change < -limit);
if (cheaper.length > 0) {
  console.log(`${cheaper.map((r) => r.name).join(', ')}: cheaper than the baseline; --update locks that in.`);
}
console.log('within budget');
