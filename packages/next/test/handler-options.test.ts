import { describe, expect, it } from 'vitest';
import { createPagesApiHandler, createRouteHandler } from '../src/index.js';

const onPaymentPaid = () => {};

// Regression: the Next handlers accepted an empty secret when built, and checked it only on the first
// request, so a deployment with the secret unset went live and anyone could sign with a blank key.
describe('Next handlers check their options when made', () => {
  it.each([
    ['empty', ''],
    ['a space', ' '],
    ['a newline', '\n'],
  ])('refuses a secret that is %s at once (App Router and Pages Router)', (_what, secret) => {
    expect(() => createRouteHandler({ secret, onPaymentPaid })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => createPagesApiHandler({ secret, onPaymentPaid })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it('defers the check when the secret is not in the environment yet (next build), and makes it on the first request', async () => {
    const POST = createRouteHandler({ secret: undefined as unknown as string, onPaymentPaid });
    await expect(POST(new Request('http://localhost/', { method: 'POST' }))).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
  });
});
