import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../src/dialects/postgres/sql-text.js';

/**
 * What a literal means to PostgreSQL, read back the way the server reads it: `'...'` with quotes doubled, or
 * ` E'...'` with quotes doubled and backslash escapes (`\\`, `\x3f`). The round trip against a real server
 * is in @service-pay/postgres' store test; this one covers every mix of the characters that need care.
 */
function readLiteral(literal: string): string {
  const escaped = literal.startsWith(" E'");
  const body = literal.slice(escaped ? 3 : 1, -1);
  expect(literal.endsWith("'")).toBe(true);
  // A lone quote inside would end the literal early: every quote comes doubled.
  expect(body.replaceAll("''", '')).not.toContain("'");
  let text = body.replaceAll("''", "'");
  if (escaped) text = text.replace(/\\(\\|x3f)/g, (_, e: string) => (e === '\\' ? '\\' : '?'));
  else expect(text).not.toMatch(/[\\?]/);
  return text;
}

describe('quoteLiteral', () => {
  it('gives back every string of quotes, backslashes, question marks and plain text', () => {
    const piece = fc.constantFrom("'", '\\', '?', 'a', 'é', '🎉', ' ', 'x3f');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const value = pieces.join('');
        expect(readLiteral(quoteLiteral(value))).toBe(value);
      }),
    );
  });

  it('refuses NUL wherever it is, whatever else the value holds', () => {
    for (const value of ['\0', 'a\0', '\0a', "o'k\0", 'why?\0', 'a\\\0b']) {
      expect(() => quoteLiteral(value)).toThrow(/NUL/);
    }
  });
});
