import { describe, expect, it } from 'vitest';
import { verificationSuite } from './suites/verification-suite.js';

describe('verifyWebhook (Web Crypto backend, node:crypto unavailable)', () => {
  it('really runs without node:crypto', async () => {
    await expect(import('node:crypto')).rejects.toThrow(/not available in this test project/);
  });
  verificationSuite();
});
