import { describe, expect, it } from 'vitest';
import { readRecordText } from '../src/dialects/postgres/record-text.js';

describe("readRecordText, a PostgreSQL row value's text form", () => {
  it.each([
    ['(t,t,,4711,1732740000000000)', ['t', 't', null, '4711', '1732740000000000']],
    ['(f,,4711,1)', ['f', null, '4711', '1']],
    ['(t,f,0123abcd,1,2)', ['t', 'f', '0123abcd', '1', '2']],
    // Quoted: a comma, a parenthesis, a space, an empty string, a quote doubled or escaped, a backslash.
    ['(t,"a,b","(x)","a b","")', ['t', 'a,b', '(x)', 'a b', '']],
    ['("say ""hi""","say \\"hi\\"","back\\\\slash")', ['say "hi"', 'say "hi"', 'back\\slash']],
    ['(,)', [null, null]],
    ['(x,)', ['x', null]],
  ])('%s', (text, fields) => {
    expect(readRecordText(text)).toEqual(fields);
  });

  it.each(['', 't,f', '(t,f', '("open', '("a"b)'])('refuses %j with a TypeError', (text) => {
    expect(() => readRecordText(text)).toThrow(TypeError);
  });
});
