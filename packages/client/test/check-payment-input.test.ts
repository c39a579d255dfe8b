import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPaymentInput } from '../src/index.js';

const valid = {
  orderNo: 'order-42',
  tokenSymbol: 'USDT',
  amount: '12.50',
  expireSec: 900,
  notifyUrl: 'https://shop.example/wh',
};

describe('checkPaymentInput', () => {
  it('accepts a valid input, with extra fields', () => {
    expect(checkPaymentInput(valid)).toEqual([]);
    expect(checkPaymentInput({ ...valid, memo: 'kept' })).toEqual([]);
  });

  it.each([[null], ['a string'], [[valid]], [undefined]])('refuses %j as a whole with INVALID_BODY', (input) => {
    expect(checkPaymentInput(input)).toEqual([
      { code: 'INVALID_BODY', field: undefined, message: expect.stringContaining('must be an object') },
    ]);
  });

  it.each([
    ['orderNo', '', 'INVALID_ORDER_NO'],
    ['orderNo', 42, 'INVALID_ORDER_NO'],
    ['orderNo', undefined, 'INVALID_ORDER_NO'],
    ['tokenSymbol', '', 'INVALID_TOKEN_SYMBOL'],
    ['tokenSymbol', null, 'INVALID_TOKEN_SYMBOL'],
    ['amount', 12.5, 'INVALID_AMOUNT'],
    ['amount', '1e3', 'INVALID_AMOUNT'],
    ['amount', '-1', 'INVALID_AMOUNT'],
    ['amount', ' 1', 'INVALID_AMOUNT'],
    ['amount', '1.', 'INVALID_AMOUNT'],
    ['amount', '.5', 'INVALID_AMOUNT'],
    ['amount', '1,5', 'INVALID_AMOUNT'],
    ['amount', '', 'INVALID_AMOUNT'],
    ['expireSec', 0, 'INVALID_EXPIRE_SEC'],
    ['expireSec', -60, 'INVALID_EXPIRE_SEC'],
    ['expireSec', 1.5, 'INVALID_EXPIRE_SEC'],
    ['expireSec', '900', 'INVALID_EXPIRE_SEC'],
    ['notifyUrl', 'not a url', 'INVALID_NOTIFY_URL'],
    ['notifyUrl', 'ftp://shop.example/wh', 'INVALID_NOTIFY_URL'],
    ['notifyUrl', undefined, 'INVALID_NOTIFY_URL'],
  ])('refuses %s = %j with %s', (field, value, code) => {
    const problems = checkPaymentInput({ ...valid, [field]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code, field });
    expect(problems[0]?.message).toContain(field);
  });

  // Issue 16: the client enforced bounds the spec leaves "not shown", with no way out. The service owns them.
  it.each([
    ['a 65-character orderNo', { orderNo: 'x'.repeat(65) }],
    ['an orderNo with spaces and non-ASCII', { orderNo: 'Bestellung Nr. 42 / März' }],
    ['a lowercase token symbol', { tokenSymbol: 'usdt' }],
    ['a 17-character token symbol', { tokenSymbol: 'A'.repeat(17) }],
    ['a 30-day expireSec', { expireSec: 30 * 86_400 }],
    ['an amount with 19 fraction digits', { amount: `1.${'1'.repeat(19)}` }],
    ['an amount with 40 integer digits', { amount: '9'.repeat(40) }],
    ['an amount with leading zeros', { amount: '01.50' }],
    ['a zero amount', { amount: '0.00' }],
    ['a notifyUrl longer than 2048 characters', { notifyUrl: `https://shop.example/${'x'.repeat(3000)}` }],
  ])('accepts %s: the spec states no such bound', (_, override) => {
    expect(checkPaymentInput({ ...valid, ...override })).toEqual([]);
  });

  it('says why a JSON number amount is refused', () => {
    expect(checkPaymentInput({ ...valid, amount: 0.1 })[0]?.message).toMatch(/not a JSON number/);
  });

  it('reports every problem, in field order', () => {
    expect(checkPaymentInput({}).map((p) => p.code)).toEqual([
      'INVALID_ORDER_NO',
      'INVALID_TOKEN_SYMBOL',
      'INVALID_AMOUNT',
      'INVALID_EXPIRE_SEC',
      'INVALID_NOTIFY_URL',
    ]);
  });

  it('accepts every decimal string and refuses every JSON number', () => {
    const decimal = fc
      .tuple(fc.stringMatching(/^\d{1,60}$/), fc.option(fc.stringMatching(/^\d{1,60}$/), { nil: undefined }))
      .map(([int, frac]) => (frac === undefined ? int : `${int}.${frac}`));
    fc.assert(fc.property(decimal, (amount) => checkPaymentInput({ ...valid, amount }).length === 0));
    fc.assert(
      fc.property(fc.double(), (amount) => checkPaymentInput({ ...valid, amount })[0]?.code === 'INVALID_AMOUNT'),
    );
  });
});
