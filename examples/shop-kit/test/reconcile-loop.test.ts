import type { ReconcileReport } from '@service-pay/core';
import { describe, expect, it } from 'vitest';
import { startReconcileLoop } from '../src/index.ts';

const emptyReport = (): ReconcileReport => ({
  counts: { credited: 0, duplicate: 0, 'not-paid': 0, conflict: 0, rejected: 0, 'in-progress': 0, failed: 0 },
  results: [],
});

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('the reconcile loop', () => {
  it('runs pass after pass, never two at once, and stop waits for the pass under way', async () => {
    let running = 0;
    let overlapped = false;
    let passes = 0;
    let release: (() => void) | undefined;
    const third = signal();
    const loop = startReconcileLoop(
      async () => {
        running++;
        overlapped ||= running > 1;
        passes++;
        // The third pass is slow: it is still running when the loop is stopped.
        if (passes === 3) {
          third.resolve();
          await new Promise<void>((resolve) => {
            release = resolve;
          });
        }
        running--;
        return emptyReport();
      },
      { everyMs: 1, onReport: () => {} },
    );
    await third.promise;
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release?.();
    await stopping;
    expect(passes).toBe(3);
    expect(overlapped).toBe(false);
    // Stopped for good: no pass after it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(passes).toBe(3);
  });

  it('goes on after a pass that failed, and hands each failure and report to its callbacks', async () => {
    const seen: string[] = [];
    let passes = 0;
    const done = signal();
    const loop = startReconcileLoop(
      async () => {
        passes++;
        if (passes === 1) throw new Error('database down');
        if (passes === 2) done.resolve();
        return emptyReport();
      },
      {
        everyMs: 1,
        onReport: (report) => seen.push(`report ${report.results.length}`),
        onError: (error) => seen.push(`error ${(error as Error).message}`),
      },
    );
    await done.promise;
    await loop.stop();
    expect(seen.slice(0, 2)).toEqual(['error database down', 'report 0']);
  });

  it('refuses an interval that is not a positive number', () => {
    expect(() => startReconcileLoop(async () => emptyReport(), { everyMs: 0 })).toThrow(/everyMs/);
  });
});
