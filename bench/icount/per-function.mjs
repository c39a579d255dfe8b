// Where an operation's instructions go, function by function: the count of `count.mjs` taken apart.
//
//   node bench/icount/per-function.mjs [-n N] [--top K] [--save FILE] [--against FILE] <script> [args...]
//
// The script runs as for a count (count.mjs: one run, its operation K = N times between two markers, the
// same node flags, under callgrind), with `--perf-basic-prof` so V8 writes where it put each function's
// machine code (`/tmp/perf-<pid>.map`). Each function's own instructions (not its callees') are summed over
// the marked window, JavaScript functions named from that map (`JS:name file:line`, whatever tier ran them,
// their compiled versions together), and one operation's share is that over N, as for the count: start-up,
// the setup and the warm-up are outside the window. `--save` keeps the table as JSON; `--against` prints,
// for another script or build, what changed function by function.
//
// Example: where the guarded ctx.tx costs, against the same delivery with the client's own transaction:
//   node bench/icount/per-function.mjs -n 3000 --save /tmp/raw.json <script> <raw contestant> 3000
//   node bench/icount/per-function.mjs -n 3000 --against /tmp/raw.json <script> <guarded contestant> 3000
//
// About 2 minutes for 3,000 SQL-store deliveries (callgrind is slower than cachegrind). Counts per function
// are as repeatable as the total (a run is deterministic under --predictable); which tier ran a function,
// and so its count, can differ between two builds.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countMarkedWindow, hasValgrind } from './count.mjs';

const USAGE =
  'usage: node bench/icount/per-function.mjs [-n N] [--top K] [--save FILE] [--against FILE] <script> [args...]';

function parseArguments(argv) {
  const options = { n: 1000, top: 40, save: undefined, against: undefined };
  let i = 0;
  for (; i < argv.length && argv[i].startsWith('-'); i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (flag === '-n' || flag === '--top') {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1)
        throw new Error(`${flag} must be a whole number, 1 or more\n${USAGE}`);
      options[flag === '-n' ? 'n' : 'top'] = number;
    } else if (flag === '--save' || flag === '--against') {
      options[flag.slice(2)] = value;
    } else {
      throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  if (i >= argv.length) throw new Error(USAGE);
  return { ...options, script: argv[i], args: argv.slice(i + 1) };
}

/**
 * Each function's own instructions in one callgrind output: `fn=` starts a function's block, a cost line
 * (`<line> <Ir>`) adds to it, and the cost line after `calls=` is a callee's inclusive cost, not its own.
 * Names are compressed (`(12) name` the first time, `(12)` after), one table per kind.
 */
function ownInstructions(text) {
  const tables = { ob: new Map(), fn: new Map(), fl: new Map() };
  const kinds = { ob: 'ob', cob: 'ob', fn: 'fn', cfn: 'fn', fl: 'fl', fi: 'fl', fe: 'fl', cfi: 'fl', cfl: 'fl' };
  const own = new Map();
  let object = '';
  let fn = '';
  let callCost = false;
  for (const line of text.split('\n')) {
    const first = line.charCodeAt(0);
    const isCost = (first >= 48 && first <= 57) || line[0] === '+' || line[0] === '-' || line[0] === '*';
    if (isCost) {
      if (callCost) {
        callCost = false;
        continue;
      }
      const cost = Number(line.split(' ')[1]);
      if (Number.isFinite(cost)) own.set(`${object}\u0000${fn}`, (own.get(`${object}\u0000${fn}`) ?? 0) + cost);
      continue;
    }
    const equals = line.indexOf('=');
    if (equals < 0) continue;
    const key = line.slice(0, equals);
    if (key === 'calls') {
      callCost = true;
      continue;
    }
    const kind = kinds[key];
    if (kind === undefined) continue;
    const match = /^\((\d+)\)(?: (.*))?$/.exec(line.slice(equals + 1));
    let name = line.slice(equals + 1);
    if (match !== null) {
      if (match[2] !== undefined) tables[kind].set(match[1], match[2]);
      name = tables[kind].get(match[1]) ?? '?';
    }
    if (key === 'ob') object = name;
    else if (key === 'fn') fn = name;
  }
  return own;
}

/** V8's map of its machine code: `<start> <size> <name>` in hex, sorted by start for a binary search. */
function codeMap(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (name.length > 0)
      entries.push({ start: Number.parseInt(start, 16), size: Number.parseInt(size, 16), name: name.join(' ') });
  }
  return entries.sort((a, b) => a.start - b.start);
}

function nameOf(address, entries) {
  let low = 0;
  let high = entries.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (entries[middle].start <= address) low = middle + 1;
    else high = middle - 1;
  }
  const entry = entries[high];
  return entry !== undefined && address < entry.start + entry.size ? entry.name : undefined;
}

/**
 * One function's name, whatever tier compiled it: V8 marks the tier (`JS:*name` optimized, `~` interpreted,
 * `^` baseline, `+` Maglev), callgrind a recursion (`'2`), neither of which is the function. C++ functions
 * (V8, Node, OpenSSL) are named by the binary's symbols.
 */
function functionName(fn, object, entries) {
  const bare = fn.replace(/'\d+$/, '');
  let name = bare;
  if (/^0x[0-9a-f]+$/.test(bare)) name = nameOf(Number.parseInt(bare, 16), entries) ?? `${object} ${bare}`;
  if (name.startsWith('JS:')) return name.replace(/^JS:[*~^+-]?/, 'JS:');
  // A C++ function by its qualified name: its parameter list and clone suffixes make no other function.
  const parameters = name.indexOf('(');
  return parameters > 0 ? name.slice(0, parameters) : name;
}

/** Each function's own instructions between the markers of one run of the script with K operations. */
async function countRun(directory, script, args, k) {
  const out = await countMarkedWindow(directory, [script, ...args, String(k)], ['--perf-basic-prof']);
  const text = await readFile(out, 'utf8');
  const pid = /^pid: (\d+)$/m.exec(text)?.[1];
  if (pid === undefined) throw new Error(`callgrind wrote no pid for ${script}`);
  const mapFile = join(tmpdir(), `perf-${pid}.map`);
  const entries = codeMap(await readFile(mapFile, 'utf8').catch(() => ''));
  await rm(mapFile, { force: true });
  const byFunction = new Map();
  for (const [key, cost] of ownInstructions(text)) {
    const [object, fn] = key.split('\u0000');
    const name = functionName(fn, object, entries);
    byFunction.set(name, (byFunction.get(name) ?? 0) + cost);
  }
  return byFunction;
}

const format = (value) => Math.round(value).toLocaleString('en-US').padStart(9);

async function main() {
  const options = parseArguments(process.argv.slice(2));
  if (!(await hasValgrind())) throw new Error('valgrind is missing (apt-get install -y valgrind)');
  const directory = await mkdtemp(join(tmpdir(), 'per-function-'));
  try {
    const window = await countRun(directory, options.script, options.args, options.n);
    const perOperation = {};
    for (const [name, instructions] of window) {
      const value = instructions / options.n;
      if (Math.round(value) !== 0) perOperation[name] = value;
    }
    const total = Object.values(perOperation).reduce((a, b) => a + b, 0);
    const what = `${options.script} ${options.args.join(' ')}`.trim();
    console.log(`instructions per operation, function by function (N = ${options.n}): ${what}`);
    console.log(`${format(total)}  in all`);
    const rows = Object.entries(perOperation).sort((a, b) => b[1] - a[1]);
    for (const [name, value] of rows.slice(0, options.top)) console.log(`${format(value)}  ${name}`);
    if (options.save !== undefined) {
      await writeFile(options.save, `${JSON.stringify({ what, n: options.n, total, perOperation }, null, 1)}\n`);
    }
    if (options.against !== undefined) {
      const before = JSON.parse(await readFile(options.against, 'utf8'));
      const names = new Set([...Object.keys(before.perOperation), ...Object.keys(perOperation)]);
      const changes = [...names]
        .map((name) => [name, (perOperation[name] ?? 0) - (before.perOperation[name] ?? 0)])
        .filter(([, change]) => Math.round(change) !== 0)
        .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
      console.log(`\nagainst ${options.against} (${before.what}): ${format(total - before.total).trim()} in all`);
      console.log('   change     before       now  function');
      for (const [name, change] of changes.slice(0, options.top)) {
        console.log(
          `${format(change)}  ${format(before.perOperation[name] ?? 0)} ${format(perOperation[name] ?? 0)}  ${name}`,
        );
      }
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
