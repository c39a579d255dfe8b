import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript build script, without types
import { source, target } from '../scripts/generate-sha256-compress.mjs';
import { INITIAL_STATE } from '../src/crypto/sha256.js';
import { compress, compressOuterBlock } from '../src/crypto/sha256-compress.js';

describe('SHA-256 compression (generated, written out round by round)', () => {
  it('is what its generator writes: nobody edited the rounds by hand', () => {
    expect(readFileSync(target as string, 'utf8')).toBe((source as () => string)());
  });

  it("one block from the initial state equals node:crypto's SHA-256 of any message that fits one block", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 55 }), (message) => {
        const block = Buffer.alloc(64);
        block.set(message);
        block[message.length] = 0x80;
        block.writeUInt32BE(message.length * 8, 60);
        const words = new Int32Array(16);
        for (let i = 0; i < 16; i++) words[i] = block.readInt32BE(i * 4);
        const state = INITIAL_STATE.slice();
        compress(state, words, state);
        const digest = Buffer.alloc(32);
        for (let i = 0; i < 8; i++) digest.writeInt32BE(state[i] as number, i * 4);
        expect(digest.toString('hex')).toBe(createHash('sha256').update(message).digest('hex'));
      }),
      { numRuns: 300 },
    );
  });

  it("the outer-block form equals node:crypto's SHA-256 of a 64-byte block and a 32-byte digest", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 64, maxLength: 64 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (first, digest) => {
          const firstWords = new Int32Array(16);
          for (let i = 0; i < 16; i++) firstWords[i] = Buffer.from(first).readInt32BE(i * 4);
          const state = INITIAL_STATE.slice();
          compress(state, firstWords, state);
          // Only the digest's eight words are handed over: the padding of a 96-byte message is the function's own.
          const digestWords = new Int32Array(8);
          for (let i = 0; i < 8; i++) digestWords[i] = Buffer.from(digest).readInt32BE(i * 4);
          const into = new Int32Array(8);
          compressOuterBlock(state, digestWords, into);
          const out = Buffer.alloc(32);
          for (let i = 0; i < 8; i++) out.writeInt32BE(into[i] as number, i * 4);
          expect(out.toString('hex')).toBe(createHash('sha256').update(first).update(digest).digest('hex'));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('FIPS 180-4\'s "abc" example', () => {
    const words = new Int32Array(16);
    words[0] = 0x61626380;
    words[15] = 24;
    const state = INITIAL_STATE.slice();
    compress(state, words, state);
    expect(Array.from(state, (w) => (w >>> 0).toString(16).padStart(8, '0')).join('')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
