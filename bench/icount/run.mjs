// `pnpm bench:icount`: instructions per operation of every operation in operations.mjs, counted by valgrind
// (count.mjs), not timed. Two identical runs differ by about 0.001%, so a 1% change shows on any machine
// however loaded it is: decide changes with these, publish the timed `pnpm bench` figures.
// `pnpm bench:icount -n 20000 handler check-map` counts a subset at another N.

import { hasValgrind } from './count.mjs';
import { countOperations, OPERATIONS } from './operations.mjs';

const args = process.argv.slice(2);
let n = 1_000;
const nAt = args.indexOf('-n');
if (nAt !== -1) {
  n = Number(args[nAt + 1]);
  args.splice(nAt, 2);
}
const names = args.length > 0 ? args : Object.keys(OPERATIONS);
const unknown = names.filter((name) => !(name in OPERATIONS));
if (unknown.length > 0 || !Number.isInteger(n) || n < 100) {
  console.error(`usage: pnpm bench:icount [-n N>=100] [${Object.keys(OPERATIONS).join(' ')}]`);
  process.exit(2);
}
if (!(await hasValgrind())) {
  console.error('bench:icount: valgrind is missing (apt-get install -y valgrind).');
  process.exit(2);
}

// Two at a time: each count is one single-threaded process. Printed as each lands.
const counts = Object.fromEntries(
  await countOperations(names, n, {
    onCount: (name, count, seconds) =>
      console.log(
        `${name.padEnd(22)} ${count.toLocaleString('en-US').padStart(9)} instructions/op  (N = ${n}, ${seconds.toFixed(0)} s)`,
      ),
  }),
);

// Ratios as speed: the reference's instructions over ours (above 1: we do less work).
const ratios = [
  ['verify', 'check', 'verifyWebhook, options hoisted / bare check', 1.2],
  ['verify-inline', 'check', 'verifyWebhook, options inline / bare check', 1.2],
  ['verify-rotating', 'check-rotating', 'verifyWebhook, rotating / check, two secrets', 1.2],
  ['verify', 'stripe', "verifyWebhook, options hoisted / Stripe's constructEvent", 1.8],
  ['verify-inline', 'stripe', "verifyWebhook, options inline / Stripe's constructEvent", 1.8],
  ['handler', 'check', 'handler fresh / bare check', 0.8],
  ['handler', 'check-map', 'handler fresh / check + Map', 0.9],
  ['handler-duplicate', 'check-map-duplicate', 'handler duplicate / check + Map duplicate', 0.95],
];
console.log('');
for (const [ours, reference, label, target] of ratios) {
  if (counts[ours] === undefined || counts[reference] === undefined) continue;
  const ratio = counts[reference] / counts[ours];
  console.log(
    `${label.padEnd(56)} ${ratio.toFixed(3)}x  (target >= ${target}x: ${ratio >= target ? 'met' : 'missed'})`,
  );
}
