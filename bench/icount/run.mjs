// `pnpm bench:icount`: instructions per operation of the memory path, counted by valgrind through
// `../shared/tools/icount` (beside the repository), not timed. Two identical runs differ by about 0.001%,
// so a 1% change shows on any machine however loaded it is: decide changes with these, publish the timed
// `pnpm bench` figures. `pnpm bench:icount -n 5000 handler check` runs a subset with a smaller N.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTESTANTS } from './memory-path.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const icount = resolve(here, '../../../shared/tools/icount');
const script = join(here, 'memory-path.mjs');

const args = process.argv.slice(2);
let n = 20_000;
const nAt = args.indexOf('-n');
if (nAt !== -1) {
  n = Number(args[nAt + 1]);
  args.splice(nAt, 2);
}
const names = args.length > 0 ? args : Object.keys(CONTESTANTS);
const unknown = names.filter((name) => !(name in CONTESTANTS));
if (unknown.length > 0 || !Number.isInteger(n) || n < 1 || n > 20_000) {
  console.error(`usage: pnpm bench:icount [-n N<=20000] [${Object.keys(CONTESTANTS).join(' ')}]`);
  process.exit(2);
}
if (!existsSync(icount)) {
  console.error(`bench:icount: ${icount} is missing (it ships in shared/tools beside the repository).`);
  process.exit(2);
}
// Below about N = 20,000 part of the operations still run in V8's lower tiers and the counts come out high
// (our handler: 96k at N = 2,000, against 65k at 20,000): compare only counts taken with the same N.
if (n < 20_000) console.log(`N = ${n}: counts include warm-up; compare only with counts taken at this N.`);

const counts = {};
for (const name of names) {
  const started = Date.now();
  const out = execFileSync(icount, ['-n', String(n), script, name], { encoding: 'utf8' });
  const match = /^(\d+) instructions\/op/.exec(out);
  if (match === null) throw new Error(`bench:icount: no count for ${name}: ${out}`);
  counts[name] = Number(match[1]);
  console.log(
    `${name.padEnd(22)} ${counts[name].toLocaleString('en-US').padStart(9)} instructions/op  (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

// Ratios as speed: the baseline's instructions over ours (above 1: we do less work).
const ratios = [
  ['handler', 'check', 'handler fresh / bare check', 0.8],
  ['handler', 'check-map', 'handler fresh / check + Map', 0.95],
  ['handler-duplicate', 'check-map-duplicate', 'handler duplicate / check + Map duplicate', 1.0],
];
console.log('');
for (const [ours, baseline, label, target] of ratios) {
  if (counts[ours] === undefined || counts[baseline] === undefined) continue;
  const ratio = counts[baseline] / counts[ours];
  console.log(
    `${label.padEnd(42)} ${ratio.toFixed(3)}x  (target >= ${target}x: ${ratio >= target ? 'met' : 'missed'})`,
  );
}
