import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as esm from '../src/index.js';

// The CommonJS build from `pnpm build`: a second copy of the classes, as in a process that loads both.
const cjs = createRequire(import.meta.url)('../dist/index.cjs') as typeof esm;

describe('error classes', () => {
  it('recognise errors made by the other build (no dual-package hazard)', () => {
    const fromCjs = new cjs.ServiceApiError(401, 'UNAUTHORIZED', 'no');
    expect(fromCjs).toBeInstanceOf(esm.ServiceApiError);
    expect(fromCjs).toBeInstanceOf(esm.ServiceError);
    expect(fromCjs).not.toBeInstanceOf(esm.ServiceTimeoutError);
    expect(new esm.ServiceTimeoutError(5, 'GET /')).toBeInstanceOf(cjs.ServiceTimeoutError);
  });

  it('keep subclasses apart and carry their fields', () => {
    const timeout = new esm.ServiceTimeoutError(100, 'GET /v1/payments/p_1');
    expect(timeout).toMatchObject({ name: 'ServiceTimeoutError', code: 'TIMEOUT', timeoutMs: 100 });
    expect(timeout).not.toBeInstanceOf(esm.ServiceApiError);
    expect(timeout).toBeInstanceOf(Error);
    const network = new esm.ServiceNetworkError(
      'GET /',
      new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }),
    );
    expect(network.message).toContain('ECONNREFUSED');
    expect(network).not.toBeInstanceOf(esm.ServiceInputError);
    expect({ code: 'TIMEOUT' }).not.toBeInstanceOf(esm.ServiceError);
    expect(null).not.toBeInstanceOf(esm.ServiceError);
  });

  it('let user subclasses work with instanceof', () => {
    class MyError extends esm.ServiceApiError {}
    const mine = new MyError(500, 'X', 'y');
    expect(mine).toBeInstanceOf(MyError);
    expect(mine).toBeInstanceOf(esm.ServiceApiError);
    expect(new esm.ServiceApiError(500, 'X', 'y')).not.toBeInstanceOf(MyError);
  });
});
