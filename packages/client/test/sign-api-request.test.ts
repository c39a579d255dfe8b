import { describe, expect, it } from 'vitest';
import { ServiceInputError, signApiRequest } from '../src/index.js';
import { opensslHmac, opensslSha256 } from './support/openssl.js';

const apiKey = 'ak_test_1';
const apiSecret = 'sk_test_Zm9vYmFy';
const timestamp = 1_763_700_000;

function parse(header: string) {
  const m = /^Service-HMAC-SHA256 ApiKey=([^,]+),Timestamp=(\d+),Signature=([0-9a-f]{64})$/.exec(header);
  if (m === null) throw new Error(`bad header ${header}`);
  return { apiKey: m[1], timestamp: m[2], signature: m[3] };
}

describe('signApiRequest, against vectors computed by openssl at test time', () => {
  it('signs a POST over the exact body bytes', () => {
    const body = JSON.stringify({
      orderNo: 'o-1',
      tokenSymbol: 'USDT',
      amount: '12.50',
      expireSec: 900,
      notifyUrl: 'https://s.example/wh',
    });
    const header = signApiRequest({ method: 'POST', path: '/v1/payments', body, apiKey, apiSecret, timestamp });
    const expected = opensslHmac(apiSecret, `${timestamp}\nPOST\n/v1/payments\n${opensslSha256(body)}`);
    expect(parse(header)).toEqual({ apiKey, timestamp: String(timestamp), signature: expected });
  });

  it('hashes the empty string for a GET without a body', () => {
    const header = signApiRequest({ method: 'GET', path: '/v1/payments/p_abc', apiKey, apiSecret, timestamp });
    const emptyHash = opensslSha256('');
    expect(emptyHash).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(parse(header).signature).toBe(opensslHmac(apiSecret, `${timestamp}\nGET\n/v1/payments/p_abc\n${emptyHash}`));
  });

  it('leaves the query string out of the signed path and upper-cases the method', () => {
    const withQuery = signApiRequest({
      method: 'get',
      path: '/v1/payments/p_abc?expand=x#frag',
      apiKey,
      apiSecret,
      timestamp,
    });
    const plain = signApiRequest({ method: 'GET', path: '/v1/payments/p_abc', apiKey, apiSecret, timestamp });
    expect(withQuery).toBe(plain);
  });

  it('hashes text as UTF-8, and bytes as given', () => {
    const text = '{"orderNo":"café-☕"}';
    const bytes = new TextEncoder().encode(text);
    const expected = opensslHmac(
      apiSecret,
      `${timestamp}\nPOST\n/v1/payments\n${opensslSha256(Buffer.from(text, 'utf8'))}`,
    );
    expect(
      parse(signApiRequest({ method: 'POST', path: '/v1/payments', body: text, apiKey, apiSecret, timestamp }))
        .signature,
    ).toBe(expected);
    expect(
      parse(signApiRequest({ method: 'POST', path: '/v1/payments', body: bytes, apiKey, apiSecret, timestamp }))
        .signature,
    ).toBe(expected);
  });

  it('defaults the timestamp to now, in Unix seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const t = Number(parse(signApiRequest({ method: 'GET', path: '/', apiKey, apiSecret })).timestamp);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  it.each([
    ['method', { method: 'PO ST' }],
    ['path', { path: 'v1/payments' }],
    ['body', { body: 42 }],
    ['apiKey', { apiKey: 'has,comma' }],
    ['apiKey', { apiKey: '' }],
    ['apiSecret', { apiSecret: '' }],
    ['timestamp', { timestamp: 1.5 }],
    ['timestamp', { timestamp: -1 }],
  ])('refuses a bad %s with INVALID_OPTIONS', (field, override) => {
    const input = { method: 'GET', path: '/v1/payments', apiKey, apiSecret, ...override } as Parameters<
      typeof signApiRequest
    >[0];
    const error = catchError(() => signApiRequest(input));
    expect(error).toBeInstanceOf(ServiceInputError);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field });
  });

  it('refuses a missing input object', () => {
    expect(catchError(() => signApiRequest(undefined as never))).toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
