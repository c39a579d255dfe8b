import { WebhookError } from '../errors/webhook-error.js';
import { consoleLogger, type WebhookLogger } from '../observe/logger.js';
import type { Outcome } from '../observe/outcome.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import { MemoryDedupeStore } from '../store/memory-store.js';
import type { WebhookStore } from '../store/transactional-store.js';
import { timerMs } from './timer-ms.js';

/**
 * The options of the exactly-once pipeline, shared by `createWebhookHandler` (and every adapter) and
 * `createReconciler`. Give both the same store so a webhook and a reconciliation of one payment credit once.
 *
 * @example
 * ```ts
 * const shared: PipelineOptions<RedisDedupeStore> = { store, leaseMs: 10_000, logger: pino() };
 * ```
 */
export interface PipelineOptions<S extends WebhookStore = DedupeStore> {
  /**
   * Where the dedupe record lives. Default: one `MemoryDedupeStore` per handler (one process only). Use
   * `RedisDedupeStore` across instances, or `PostgresStore` to commit the record with the credit.
   */
  store?: S;
  /** How long a claim holds before another attempt may take over; renewed every third while the handler runs. Default 10 s. */
  leaseMs?: number;
  /** How long the handler may run before `ctx.signal` aborts and the attempt is given up (500). Default 30 s. */
  handlerTimeoutMs?: number;
  /** Longest wait for any store call before answering 503. Default 2 s, well under the sender's 5 s. */
  storeTimeoutMs?: number;
  /** How long a completed key is remembered (lease stores). Default 7 days. */
  retainMs?: number;
  /** Default: warnings and errors to the console. */
  logger?: WebhookLogger;
  /** Called once per request (or reconciled payment) with what happened. A throwing hook is logged and changes nothing. */
  onOutcome?: (outcome: Outcome) => void | Promise<void>;
}

/** Pipeline options checked and defaulted once. */
export interface ResolvedPipelineOptions {
  store: WebhookStore;
  leaseMs: number;
  handlerTimeoutMs: number;
  storeTimeoutMs: number;
  retainMs: number;
  logger: WebhookLogger;
  onOutcome: ((outcome: Outcome) => void | Promise<void>) | undefined;
}

/** A value an option must be: a positive, finite number. */
export function positiveOption(name: string, value: unknown, fallback: number): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !(Number.isFinite(v) && v > 0)) {
    throw new WebhookError('INVALID_OPTIONS', `options.${name} must be a positive number of milliseconds or bytes.`);
  }
  return v;
}

/** Checks every pipeline option once, at start-up, so a misconfiguration fails the deploy, not a payment. */
export function resolvePipelineOptions(options: PipelineOptions<WebhookStore>): ResolvedPipelineOptions {
  const logger = options.logger ?? consoleLogger;
  if (logger === null || typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.logger must have warn and error methods (pino and console do).');
  }
  const store = options.store ?? new MemoryDedupeStore({ logger });
  checkStore(store);
  if (options.onOutcome !== undefined && typeof options.onOutcome !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.onOutcome must be a function.');
  }
  return {
    store,
    leaseMs: positiveOption('leaseMs', options.leaseMs, 10_000),
    handlerTimeoutMs: positiveOption('handlerTimeoutMs', options.handlerTimeoutMs, 30_000),
    storeTimeoutMs: timerMs(options.storeTimeoutMs, 2_000, 'options.storeTimeoutMs'),
    retainMs: positiveOption('retainMs', options.retainMs, 7 * 24 * 60 * 60 * 1000),
    logger,
    onOutcome: options.onOutcome,
  };
}

function checkStore(store: unknown): void {
  const s = store as Record<string, unknown> | null;
  if (s === null || typeof s !== 'object') {
    throw new WebhookError('INVALID_OPTIONS', 'options.store must be a DedupeStore or a TransactionalStore.');
  }
  const methods = s.kind === 'transactional' ? ['begin'] : ['claim', 'complete', 'release', 'extend'];
  for (const method of methods) {
    if (typeof s[method] !== 'function') {
      const kind = s.kind === 'transactional' ? 'TransactionalStore' : 'DedupeStore';
      throw new WebhookError('INVALID_OPTIONS', `options.store must implement ${kind} (missing ${method}).`);
    }
  }
}
