import { createWebhookHandler } from '@service-pay/core';
import { describe, expect, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// The packages' test configs resolve the other packages to their source (vitest.shared.ts): an edit in core
// is tested here without rebuilding core. A stack frame says which copy ran.
function stackOf(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    return String((error as Error).stack);
  }
  throw new Error('expected the options check to throw');
}

describe("the adapters' tests run core from its source", () => {
  it('core imported by the test', () => {
    const stack = stackOf(() => createWebhookHandler({ secret: 's', stor: 1 } as never));
    expect(stack).toMatch(/packages\/core\/src\//);
    expect(stack).not.toMatch(/packages\/core\/dist\//);
  });

  it('core imported by the adapter under test', () => {
    const stack = stackOf(() => serviceWebhook({ secret: 's', stor: 1 } as never));
    expect(stack).toMatch(/packages\/core\/src\//);
    expect(stack).not.toMatch(/packages\/core\/dist\//);
  });
});
