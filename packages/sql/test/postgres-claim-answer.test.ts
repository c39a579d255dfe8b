import { describe, expect, it } from 'vitest';
import { postgresDialect } from '../src/dialects/postgres/dialect.js';
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

describe("the take function's answer, as the PostgreSQL dialect reads it", () => {
  const table = postgresDialect.table('inbox', 'KyselyStore');
  const read = (take: unknown) => postgresDialect.readClaim([{ take }], table, 'KyselyStore');

  it.each([
    ['w,4711,1732740000000000', { state: 'free', session: { pid: 4711, xactUs: '1732740000000000' }, written: true }],
    // The fingerprint is the rest of the text, commas and all.
    ['r,100.00 USDT,x', { state: 'completed', fingerprint: '100.00 USDT,x', answerBeforeRollback: true }],
    ['r,', { state: 'completed', fingerprint: '', answerBeforeRollback: true }],
    ['h', { state: 'held', answerBeforeRollback: true }],
  ])('%s', (take, claim) => {
    expect(read(take)).toEqual(claim);
  });

  it.each(['', 'w', 'w,', 'w,4711', 'w,4711,', 'w,x,1', 'r', 'held', 'x,1'])('refuses %j naming the store', (take) => {
    expect(() => read(take)).toThrow(/^KyselyStore: the inbox's take function answered/);
  });

  it('refuses a row without the answer as text', () => {
    expect(() => read(null)).toThrow(/^KyselyStore: the inbox's claim function answered/);
    expect(() => postgresDialect.readClaim([], table, 'KyselyStore')).toThrow(TypeError);
  });
});
