// Writes src/crypto/sha256-compress.ts: SHA-256's compression function (FIPS 180-4, section 6.2.2), its 64
// rounds and 48 schedule steps written out one by one.
//
//   node packages/core/scripts/generate-sha256-compress.mjs          # write the file
//   node packages/core/scripts/generate-sha256-compress.mjs --check  # exit 1 if the file differs
//
// The core's tests hold the committed file to this script's output (sha256-compress.test.ts).
//
// Written out, V8 keeps the eight working variables and the sixteen schedule words in locals, with every
// round constant inline. The same rounds as a loop over typed arrays cost about 5,300 instructions a
// block, and eight rounds a turn with helper functions about 9,000, against 3,650 written out as FIPS
// spells them (Node 24, counted under valgrind). Spelt with fewer operations (the sigmas as nested
// rotations, Ch and Maj in their short forms, below) and, for an HMAC's outer block, with the padding's
// words folded in, that block costs about 2,900. The file is generated rather than written by hand so that its 240 near-identical lines
// cannot differ in one misplaced index: this script is what a reader checks, and the test suite holds the
// file to it and to node:crypto.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4, 4.2.2). */
const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
];

/** `x` rotated right by `n` bits, as JavaScript spells it (V8 compiles the pair to one rotate). */
const rotr = (x, n) => `((${x} >>> ${n}) | (${x} << ${32 - n}))`;
// The same rotation on numbers, for schedule words known when the file is written.
const rotrOf = (x, n) => (x >>> n) | (x << (32 - n)) | 0;

/**
 * The schedule's small sigmas, each written with two rotations where FIPS writes three:
 * σ0(x) = rotr(x ^ rotr(x, 11), 7) ^ (x >>> 3) and σ1(x) = rotr(x ^ rotr(x, 2), 17) ^ (x >>> 10). `scratch`
 * holds the inner xor (both meet in one sum, so each has its own); `of` is FIPS's form, on a known word.
 */
const SIGMA0 = { inner: 11, outer: 7, shift: 3, scratch: 'r', of: (x) => rotrOf(x, 7) ^ rotrOf(x, 18) ^ (x >>> 3) };
const SIGMA1 = {
  inner: 2,
  outer: 17,
  shift: 10,
  scratch: 's',
  of: (x) => rotrOf(x, 17) ^ rotrOf(x, 19) ^ (x >>> 10),
};

/**
 * The body of a compression whose schedule words are `known[i]` where that is a number (a constant of the
 * block's padding), read from `words[i]` where it is undefined. A schedule word that depends only on known
 * words is computed here, and the known part of every sum is one literal: what V8 would otherwise add up on
 * every call. Returns the lines of the function's body.
 */
function body(known) {
  const lines = [];
  const line = (text) => lines.push(`  ${text}`);
  // The schedule keeps its last sixteen words in w0..w15: word t lives in w(t mod 16). Each is a number
  // (known) or the variable's name (computed on each call).
  const value = [];
  for (let i = 0; i < 16; i++) {
    if (known[i] === undefined) {
      line(`let w${i} = words[${i}] as number;`);
      value.push(`w${i}`);
    } else {
      value.push(known[i] | 0);
    }
  }
  const declared = new Set(value.filter((v) => typeof v === 'string'));
  line('let a = state[0] as number;');
  line('let b = state[1] as number;');
  line('let c = state[2] as number;');
  line('let d = state[3] as number;');
  line('let e = state[4] as number;');
  line('let f = state[5] as number;');
  line('let g = state[6] as number;');
  line('let h = state[7] as number;');
  // Scratch for the big sigmas, and a ^ b of this round and the last (see Maj below).
  line('let s = 0;');
  line('let r = 0;');
  line('let x = 0;');
  line('let y = b ^ c;');
  /** `terms` (strings) plus `constant`, as one 32-bit sum. */
  const sum = (terms, constant) => [...terms, ...(constant === 0 ? [] : [constant])].join(' + ');
  // No variables are shuffled between rounds: round t names them rotated by t (FIPS's h is round 1's g),
  // so each round is three assignments.
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  for (let t = 0; t < 64; t++) {
    // c is not named: Maj reads it through the previous round's a ^ b (below).
    const [a, b, , d, e, f, g, h] = names.map((_, i) => names[(i - t + 64) % 8]);
    if (t >= 16) {
      // W(t) = σ1(W(t-2)) + W(t-7) + σ0(W(t-15)) + W(t-16); a term of known words is added up here.
      const parts = [
        [value[(t - 2) % 16], SIGMA1],
        [value[(t - 7) % 16], undefined],
        [value[(t - 15) % 16], SIGMA0],
        [value[(t - 16) % 16], undefined],
      ];
      const terms = [];
      let constant = 0;
      for (const [v, sigma] of parts) {
        if (typeof v === 'number') constant = (constant + (sigma === undefined ? v : sigma.of(v))) | 0;
        else if (sigma === undefined) terms.push(v);
        else {
          line(`${sigma.scratch} = ${v} ^ ${rotr(v, sigma.inner)};`);
          terms.push(`(${rotr(sigma.scratch, sigma.outer)} ^ (${v} >>> ${sigma.shift}))`);
        }
      }
      if (terms.length === 0) {
        value[t % 16] = constant;
      } else {
        const name = `w${t % 16}`;
        line(`${declared.has(name) ? '' : 'let '}${name} = ${sum(terms, constant)} | 0;`);
        declared.add(name);
        value[t % 16] = name;
      }
    }
    const word = value[t % 16];
    const added = typeof word === 'number' ? sum([], (K[t] + word) | 0) || '0' : `${K[t] | 0} + ${word}`;
    // Σ1(e) = rotr(e ^ rotr(e ^ rotr(e, 14), 5), 6): three rotations as FIPS's, each of a value used once
    // (no copy kept for the next), and Ch in its three-operation form.
    line(`s = ${e} ^ ${rotr(e, 14)};`);
    line(`s = ${e} ^ ${rotr('s', 5)};`);
    line(`${h} = ${h} + ${rotr('s', 6)} + (${g} ^ (${e} & (${f} ^ ${g}))) + ${added} | 0;`);
    line(`${d} = (${d} + ${h}) | 0;`);
    // Σ0(a) = rotr(a ^ rotr(a ^ rotr(a, 9), 11), 2); Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)), where b ^ c is
    // the previous round's a ^ b (the variables' names rotate by one a round).
    const [x, previous] = t % 2 === 0 ? ['x', 'y'] : ['y', 'x'];
    line(`s = ${a} ^ ${rotr(a, 9)};`);
    line(`s = ${a} ^ ${rotr('s', 11)};`);
    line(`${x} = ${a} ^ ${b};`);
    line(`${h} = ${h} + ${rotr('s', 2)} + (${b} ^ (${x} & ${previous})) | 0;`);
  }
  names.forEach((v, i) => {
    line(`into[${i}] = ((state[${i}] as number) + ${v}) | 0;`);
  });
  return lines;
}

/**
 * An HMAC-SHA256's outer block: the inner digest (eight words) and the padding of a 96-byte message (the
 * outer pad's block before it), a 1 bit, zeros and the length in bits.
 */
const OUTER_PADDING = [0x80000000, 0, 0, 0, 0, 0, 0, (64 + 32) * 8];

/** The file's text. */
export function source() {
  const general = body(Array.from({ length: 16 }, () => undefined));
  const outer = body([...Array.from({ length: 8 }, () => undefined), ...OUTER_PADDING]);
  return `// Generated by scripts/generate-sha256-compress.mjs: edit that, not this file.
// biome-ignore-all format: generated

/**
 * SHA-256's compression function (FIPS 180-4, 6.2.2): one 64-byte block, as sixteen big-endian 32-bit
 * \`words\`, folded into the eight-word \`state\`, the result written to \`into\`: \`state\` itself, or another
 * array where a state is kept for reuse (an HMAC pad's). No branch or memory access depends on the data.
 *
 * @example
 * \`\`\`ts
 * const state = INITIAL_STATE.slice();
 * compress(state, words, state); // words: one padded block, as big-endian 32-bit words
 * \`\`\`
 */
export function compress(state: Readonly<Int32Array>, words: Readonly<Int32Array>, into: Int32Array): void {
${general.join('\n')}
}

/**
 * \`compress\` for an HMAC-SHA256's outer hash, whose second and last block is the inner digest and a
 * padding fixed by the message's length (96 bytes: the outer pad's block, then the digest). Only
 * \`words[0]\` to \`words[7]\` (the digest) are read; the padding's words, and every schedule word made of
 * them alone, are literals.
 *
 * @example
 * \`\`\`ts
 * compressOuterBlock(outerPadState, innerDigestWords, into); // into: the HMAC, as eight words
 * \`\`\`
 */
export function compressOuterBlock(state: Readonly<Int32Array>, words: Readonly<Int32Array>, into: Int32Array): void {
${outer.join('\n')}
}
`;
}

/** Where the file is written. */
export const target = fileURLToPath(new URL('../src/crypto/sha256-compress.ts', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== source()) {
      console.error(`${target} is not what scripts/generate-sha256-compress.mjs writes: run it.`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, source());
  }
}
