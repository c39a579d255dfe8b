import { clientGuard, WriteOutsideTransactionError, wrapMethod } from '@service-pay/core/node';
import { DynamoDbStoreError } from './errors.js';
import { isPartiqlSelect } from './partiql-select.js';

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
 * The commands that only read. A document client's commands reach the stack as the low-level command
 * they wrap (`GetCommand` runs `GetItemCommand`), so these names cover both clients.
 */
const READS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
]);

/**
 * True for a command DynamoDB can only run as a read: one of `READS`, or PartiQL whose every statement is
 * a `SELECT` as DynamoDB reads it. Default-deny: any other command (a write, a table change, a command
 * this list does not know, one without a name) is not a read.
 */
function isRead(command: string | undefined, input: unknown): boolean {
  if (command === undefined) return false;
  if (READS.has(command)) return true;
  const given = (input ?? {}) as { Statement?: unknown; Statements?: unknown; TransactStatements?: unknown };
  if (command === 'ExecuteStatementCommand') return isPartiqlSelect(given.Statement);
  const list =
    command === 'BatchExecuteStatementCommand'
      ? given.Statements
      : command === 'ExecuteTransactionCommand'
        ? given.TransactStatements
        : undefined;
  return (
    Array.isArray(list) &&
    list.length > 0 &&
    list.every((one) => isPartiqlSelect((one as { Statement?: unknown } | null)?.Statement))
  );
}

const guardedStacks = new WeakSet<object>();

/**
 * The refusal the guard's step made during the `send` running now, when the step ran within that call
 * (see `guardSend`); undefined otherwise.
 */
let refusedInSend: Promise<never> | undefined;

/**
 * Guards the client whose middleware stack is `stack` for the store named by `store` (a document client
 * shares its client's stack, so either is guarded with the other): while a delivery of that store runs
 * in the caller's async context, every command but a read (`isRead`) is refused with
 * `WriteOutsideTransactionError`, recorded in the delivery's scope, so a refusal the handler caught or
 * never awaited still fails the delivery. The store's own requests (`asStoreWork`), commands inside
 * `ctx.outsideTransaction`, and every command from other contexts or after the delivery pass untouched.
 * The step is added once per stack, however many stores share the client. A client that caches its
 * middleware is refused (`refuseCachedMiddleware`).
 */
export function guardWrites(stack: MiddlewareStackLike, store: object, client: object): void {
  refuseCachedMiddleware(client);
  const guard = clientGuard(stack, store, 'DynamoDbStore');
  guardSend(client);
  if (guardedStacks.has(stack)) return;
  guardedStacks.add(stack);
  stack.add(
    (next, context) => (args) => {
      const inside = guard.running();
      if (inside !== undefined && !isRead(context.commandName, args.input)) {
        const what = `${context.commandName ?? 'a command'}: only GetItem, BatchGetItem, Query, Scan, TransactGetItems and PartiQL SELECT are sent during a delivery`;
        const refused = inside.delivery.refuse(new WriteOutsideTransactionError(inside.store, what));
        refusedInSend = refused;
        return refused;
      }
      return next(args);
    },
    { step: 'initialize', name: 'servicePayWriteOutsideTransactionGuard', override: true },
  );
}

/**
 * The SDK's `send` answers `handler(command).then(...)`, a promise of its own made from the guard's
 * refusal: a refused `client.send(...)` the handler never awaited would reject unhandled, which ends a
 * plain Node process. So `send` of the client the store was given answers the refusal itself (a
 * rejected promise already marked handled; the delivery fails at commit all the same) when the guard's
 * step refused within the call, as it does for the SDK's own steps, which reach it synchronously. A
 * document client made later from the same client shares the guard, not this: its refusals still fail
 * the delivery, but one never awaited is reported by Node as unhandled.
 */
function guardSend(client: object): void {
  wrapMethod(client, 'send', (original, args) => {
    const outer = refusedInSend;
    refusedInSend = undefined;
    try {
      const sent = original(...args);
      const refused = refusedInSend as Promise<never> | undefined;
      if (refused === undefined || !(sent instanceof Promise)) return sent;
      sent.catch(() => {});
      return refused;
    } finally {
      refusedInSend = outer;
    }
  });
}

/**
 * A client built with `cacheMiddleware: true` resolves each command's middleware once, on its first send,
 * and keeps that handler: a command the app sent before the store was built keeps running without the
 * guard's step, and the SDK gives no public way to drop the cache. Refused rather than guarded in part.
 */
function refuseCachedMiddleware(client: object): void {
  if ((client as { config?: { cacheMiddleware?: unknown } }).config?.cacheMiddleware !== true) return;
  throw new DynamoDbStoreError(
    'UNGUARDED_CLIENT',
    "the client was built with cacheMiddleware: true. The SDK then keeps each command's middleware from its " +
      'first send, so a command the app sent before this store was built would skip the guard that refuses ' +
      'writes beside ctx.tx during a delivery (and a retried delivery would credit twice). Give the store a ' +
      'client without cacheMiddleware (the default); the app may keep a cached client of its own for other work.',
  );
}
