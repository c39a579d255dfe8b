import { type ClaimOutcome, type DedupeStore, MemoryDedupeStore } from '../../src/index.js';
import { recordingLogger } from './recording-logger.js';

type Fault = Error | 'hang' | { after: number };

/**
 * A lease store that answers through a real `MemoryDedupeStore` but can be told to fail, stall, or answer
 * late (landing after the pipeline gave up), one method at a time: a store that refuses, never answers, or
 * answers after the pipeline's `storeTimeoutMs`, faults a real server reaches only by luck of timing.
 */
export class FaultyStore implements DedupeStore {
  readonly inner = new MemoryDedupeStore({ logger: recordingLogger() });
  failClaim: Fault | undefined;
  failComplete: Fault | false | undefined;
  failRelease: Fault | undefined;
  extendAnswer: boolean | Error | undefined;
  readonly calls: Array<{ method: string; key: string; token: string }> = [];

  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    this.calls.push({ method: 'claim', key, token });
    return this.#faulted(this.failClaim, () => this.inner.claim(key, token, fingerprint, leaseMs));
  }
  complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean> {
    this.calls.push({ method: 'complete', key, token });
    if (this.failComplete === false) return Promise.resolve(false);
    return this.#faulted(this.failComplete, () => this.inner.complete(key, token, retainMs, fingerprint));
  }
  release(key: string, token: string): Promise<boolean> {
    this.calls.push({ method: 'release', key, token });
    return this.#faulted(this.failRelease, () => this.inner.release(key, token));
  }
  extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    this.calls.push({ method: 'extend', key, token });
    if (this.extendAnswer instanceof Error) return Promise.reject(this.extendAnswer);
    if (this.extendAnswer !== undefined) return Promise.resolve(this.extendAnswer);
    return this.inner.extend(key, token, leaseMs);
  }
  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  #faulted<T>(fault: Fault | undefined, real: () => Promise<T>): Promise<T> {
    if (fault === undefined) return real();
    if (fault === 'hang') return new Promise(() => {});
    if (fault instanceof Error) return Promise.reject(fault);
    // Lands late: runs for real after `after` ms, as a command stuck behind a paused server would.
    return new Promise((resolve, reject) => setTimeout(() => real().then(resolve, reject), fault.after));
  }
}
