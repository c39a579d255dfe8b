import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serviceWebhook as expressWebhook } from '@service-pay/express';
import { serviceWebhook as fastifyWebhook } from '@service-pay/fastify';
import { serviceWebhook as honoWebhook } from '@service-pay/hono';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const onPaymentPaid = () => {};
const BLANK = [' ', '\n', '', ['whsec_real_0123456789', ' ']] as const;

// Regression: a whitespace-only secret, or one blank slot of a rotation list, was accepted as an
// HMAC key: a payment of 1,000,000 USDT signed with " " was credited. Every adapter refuses it when made.
// (Next.js: packages/next/test/handler-options.test.ts; NestJS: packages/nestjs/test.)
describe('every adapter refuses a blank secret when it is made, before any payment', () => {
  it.each(BLANK)('Express: serviceWebhook({ secret: %j })', (secret) => {
    expect(() => expressWebhook({ secret: secret as never, onPaymentPaid })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it.each(BLANK)('Hono: serviceWebhook({ secret: %j })', (secret) => {
    expect(() => honoWebhook({ secret: secret as never, onPaymentPaid })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it.each(BLANK)('Fastify: app.register(serviceWebhook, { secret: %j }) fails the start-up', async (secret) => {
    const app = Fastify();
    app.register(fastifyWebhook, { path: '/webhooks/service', secret: secret as never, onPaymentPaid });
    await expect(app.ready()).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await app.close().catch(() => {});
  });
});

// Regression: `pnpm test:chaos` pinned 2,000 payments and ignored CHAOS_PAYMENTS.
describe('pnpm test:chaos', () => {
  const script = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> })
    .scripts['test:chaos'] as string;
  // The script as the shell runs it, with the build and the suite replaced by a print of what the suite sees.
  const seen = (env: Record<string, string>) =>
    execFileSync(
      'sh',
      ['-c', script.replace(/pnpm -s build && /, '').replace(/vitest run.*$/, 'node -p process.env.CHAOS_PAYMENTS')],
      {
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
      },
    ).trim();

  it('runs CHAOS_PAYMENTS payments when it is set, and 2,000 when it is not', () => {
    expect(seen({ CHAOS_PAYMENTS: '10000' })).toBe('10000');
    expect(seen({})).toBe('2000');
  });
});
