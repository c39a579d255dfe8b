import { describe, expect, it } from 'vitest';
import { ServiceApiError, ServiceInputError, signApiRequest, verifyApiRequest } from '../src/index.js';
import { opensslHmac, opensslSha256 } from './support/openssl.js';

const apiKey = 'ak_test_1';
const apiSecret = 'sk_test_secret';
const nowMs = 1_763_700_000_000;
const nowSec = nowMs / 1000;
const options = { getApiSecret: (key: string) => (key === apiKey ? apiSecret : undefined), now: () => nowMs };
const body = '{"orderNo":"o-1"}';

function signed(overrides: Partial<Parameters<typeof signApiRequest>[0]> = {}) {
  return signApiRequest({
    method: 'POST',
    path: '/v1/payments',
    body,
    apiKey,
    apiSecret,
    timestamp: nowSec,
    ...overrides,
  });
}

async function reason(promise: Promise<unknown>): Promise<ServiceApiError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceApiError);
  expect(error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  return error as ServiceApiError;
}

describe('verifyApiRequest', () => {
  it('accepts a correctly signed request and names the merchant', async () => {
    const request = { method: 'POST', path: '/v1/payments', headers: { authorization: signed() }, rawBody: body };
    await expect(verifyApiRequest(request, options)).resolves.toEqual({ apiKey, timestamp: nowSec });
  });

  it('accepts a header built by hand from openssl digests (independent of our signer)', async () => {
    const hash = opensslSha256('');
    const signature = opensslHmac(apiSecret, `${nowSec}\nGET\n/v1/payments/p_1\n${hash}`);
    const authorization = `Service-HMAC-SHA256 ApiKey=${apiKey},Timestamp=${nowSec},Signature=${signature}`;
    const request = {
      method: 'GET',
      path: '/v1/payments/p_1?x=1',
      headers: new Headers({ Authorization: authorization }),
    };
    await expect(verifyApiRequest(request, options)).resolves.toEqual({ apiKey, timestamp: nowSec });
  });

  it('finds the header whatever its case, with bytes as the body, and an async secret lookup', async () => {
    const request = {
      method: 'post',
      path: '/v1/payments',
      headers: { AuThOrIzAtIoN: signed() },
      rawBody: Buffer.from(body),
    };
    await expect(verifyApiRequest(request, { ...options, getApiSecret: async () => apiSecret })).resolves.toMatchObject(
      { apiKey },
    );
  });

  it('refuses a missing header', async () => {
    const error = await reason(
      verifyApiRequest({ method: 'POST', path: '/v1/payments', headers: {}, rawBody: body }, options),
    );
    expect(error.message).toMatch(/Missing Authorization header/);
  });

  it('refuses a header sent twice', async () => {
    const headers = { authorization: [signed(), signed()] };
    expect(
      (await reason(verifyApiRequest({ method: 'POST', path: '/v1/payments', headers, rawBody: body }, options)))
        .message,
    ).toMatch(/2 times/);
  });

  it.each([
    ['another scheme', 'Bearer abc', /scheme/],
    ['no parameters', 'Service-HMAC-SHA256', /Malformed/],
    ['a missing part', `Service-HMAC-SHA256 ApiKey=${apiKey},Timestamp=${nowSec}`, /Malformed/],
    [
      'a repeated part',
      `Service-HMAC-SHA256 ApiKey=${apiKey},ApiKey=${apiKey},Timestamp=${nowSec},Signature=${'a'.repeat(64)}`,
      /Malformed/,
    ],
    [
      'a non-digit timestamp',
      `Service-HMAC-SHA256 ApiKey=${apiKey},Timestamp=12a,Signature=${'a'.repeat(64)}`,
      /Timestamp must be/,
    ],
    ['a short signature', `Service-HMAC-SHA256 ApiKey=${apiKey},Timestamp=${nowSec},Signature=abc`, /64 hex/],
  ])('refuses a malformed header: %s', async (_, authorization, message) => {
    const request = { method: 'POST', path: '/v1/payments', headers: { authorization }, rawBody: body };
    expect((await reason(verifyApiRequest(request, options))).message).toMatch(message);
  });

  it('refuses an unknown ApiKey exactly as a wrong signature: no key oracle', async () => {
    // Before: "Unknown ApiKey" for one and "Signature does not match" for the other.
    const request = (authorization: string) => ({
      method: 'POST',
      path: '/v1/payments',
      headers: { authorization },
      rawBody: body,
    });
    let lookups = 0;
    const counting = {
      ...options,
      getApiSecret: (key: string) => {
        lookups += 1;
        return options.getApiSecret(key);
      },
    };
    const unknown = await reason(verifyApiRequest(request(signed({ apiKey: 'ak_other' })), counting));
    const wrong = await reason(verifyApiRequest(request(signed({ apiSecret: 'wrong' })), counting));
    expect([unknown.status, unknown.code, unknown.message]).toEqual([wrong.status, wrong.code, wrong.message]);
    expect(unknown.message).toMatch(/Signature does not match, or the ApiKey is unknown/);
    expect(lookups).toBe(2); // both looked their key up; the unknown one is then checked against a decoy secret
  });

  it.each([
    ['the wrong secret', { headers: { authorization: signed({ apiSecret: 'wrong' }) } }],
    ['a changed body', { rawBody: '{"orderNo":"o-2"}' }],
    ['a changed path', { path: '/v1/payments/p_1' }],
    ['a changed method', { method: 'PUT' }],
    ['a missing body', { rawBody: undefined }],
  ])('refuses a wrong signature: %s', async (_, override) => {
    const request = {
      method: 'POST',
      path: '/v1/payments',
      headers: { authorization: signed() },
      rawBody: body,
      ...override,
    };
    expect((await reason(verifyApiRequest(request, options))).message).toMatch(/Signature does not match/);
  });

  it.each([-301, 301, -86_400])('refuses a timestamp %i s away from the server clock', async (offset) => {
    const request = {
      method: 'POST',
      path: '/v1/payments',
      headers: { authorization: signed({ timestamp: nowSec + offset }) },
      rawBody: body,
    };
    expect((await reason(verifyApiRequest(request, options))).message).toMatch(/outside the allowed window of 300 s/);
  });

  it.each([-300, 300, 0])('accepts a timestamp %i s away (the window is inclusive)', async (offset) => {
    const request = {
      method: 'POST',
      path: '/v1/payments',
      headers: { authorization: signed({ timestamp: nowSec + offset }) },
      rawBody: body,
    };
    await expect(verifyApiRequest(request, options)).resolves.toMatchObject({ apiKey });
  });

  it('honours toleranceSec', async () => {
    const request = {
      method: 'POST',
      path: '/v1/payments',
      headers: { authorization: signed({ timestamp: nowSec - 10 }) },
      rawBody: body,
    };
    await reason(verifyApiRequest(request, { ...options, toleranceSec: 5 }));
  });

  it('refuses bad options with INVALID_OPTIONS, not a crash', async () => {
    const request = { method: 'POST', path: '/v1/payments', headers: {}, rawBody: body };
    await expect(verifyApiRequest(request, {} as never)).rejects.toBeInstanceOf(ServiceInputError);
    await expect(verifyApiRequest(request, { ...options, toleranceSec: -1 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
    await expect(verifyApiRequest(null as never, options)).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
