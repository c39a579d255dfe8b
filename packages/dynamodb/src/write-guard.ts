import { AsyncLocalStorage } from 'node:async_hooks';
import { WriteOutsideTransactionError } from './errors.js';

/** What the guard needs of a client: its public middleware stack (`client.middlewareStack`). */
export interface MiddlewareStackLike {
  add(
    middleware: (
      next: (args: { input: unknown }) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: { input: unknown }) => Promise<unknown>,
    options: { step: 'initialize'; name: string; override?: boolean },
  ): void;
}

/**
 * One delivery's scope: the stack of the client its store was given, open from the handler's start until
 * the delivery commits or rolls back (the guard lives exactly as long as the delivery: background work the
 * handler left behind writes freely once it is over).
 */
export interface DeliveryScope {
  readonly stack: object;
  open: boolean;
}

const delivery = new AsyncLocalStorage<DeliveryScope>();
/** Set around the store's own requests, which pass the guard whatever context they are sent from. */
const storeCall = new AsyncLocalStorage<true>();
const guardedStacks = new WeakSet<object>();

/** Runs the handler inside its delivery's scope. */
export function inDelivery<T>(scope: DeliveryScope, handler: () => Promise<T>): Promise<T> {
  return delivery.run(scope, handler);
}

/** Sends one of the store's own requests: never refused by the guard. */
export function asStore<T>(send: () => Promise<T>): Promise<T> {
  return storeCall.run(true, send);
}

// A document client's commands reach this stack as the low-level command they wrap (PutCommand runs
// PutItemCommand), so the low-level names cover both clients.
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);
const PARTIQL_WRITE = /^\s*(insert|update|delete|upsert)\b/i;

function isWrite(command: string | undefined, input: unknown): boolean {
  if (command === undefined) return false;
  if (WRITES.has(command)) return true;
  const statement = (input as { Statement?: unknown } | undefined)?.Statement;
  if (command === 'ExecuteStatementCommand') return typeof statement === 'string' && PARTIQL_WRITE.test(statement);
  if (command === 'BatchExecuteStatementCommand' || command === 'ExecuteTransactionCommand') {
    const list =
      (input as { Statements?: unknown[]; TransactStatements?: unknown[] }).Statements ??
      (input as { TransactStatements?: unknown[] }).TransactStatements ??
      [];
    return list.some((s) => PARTIQL_WRITE.test(String((s as { Statement?: unknown })?.Statement ?? '')));
  }
  return false;
}

/**
 * Adds, once per middleware stack, the step that refuses a write sent through this client from inside an
 * open delivery of a store given this client (a document client shares its client's stack, so either is
 * guarded with the other). Everything else passes untouched: reads, the store's own requests, writes from
 * other contexts.
 */
export function guardWrites(stack: MiddlewareStackLike): void {
  if (guardedStacks.has(stack)) return;
  guardedStacks.add(stack);
  stack.add(
    (next, context) => (args) => {
      const scope = delivery.getStore();
      if (
        scope?.open &&
        scope.stack === stack &&
        storeCall.getStore() !== true &&
        isWrite(context.commandName, args.input)
      ) {
        return Promise.reject(new WriteOutsideTransactionError(context.commandName as string));
      }
      return next(args);
    },
    { step: 'initialize', name: 'servicePayWriteOutsideTransactionGuard', override: true },
  );
}
