const told = new WeakSet<object>();

/**
 * What a query builder's stores cannot refuse when they are given no pool under it to watch: the app's own
 * writes through its `db` (Kysely, Drizzle), for `sayUnguarded`.
 *
 * @example
 * ```ts
 * sayUnguarded(db, 'KyselyStore', DB_WRITES_BESIDE_TX, 'pass the pool under your dialect as options.pool');
 * ```
 */
export const DB_WRITES_BESIDE_TX = "writes through the app's db beside ctx.tx";

/**
 * Says once per client, at the store's construction, what the write guard cannot see on it: a client
 * whose statements have no public hook (Prisma on a pool it made itself, postgres.js's tagged template).
 * A Node process warning (`SERVICE_PAY_UNGUARDED`), so it shows in the app's output at start-up.
 *
 * @example
 * ```ts
 * sayUnguarded(prisma, 'PrismaStore', 'writes through the app\'s prisma', 'pass the adapter\'s pool as options.pool');
 * ```
 */
export function sayUnguarded(client: object, store: string, what: string, remedy: string): void {
  if (told.has(client)) return;
  told.add(client);
  const message =
    `${store}: ${what} during a delivery cannot be refused (the client gives no public way to see them), ` +
    `so such a write would commit apart from the delivery and a retry would credit again. Write through ` +
    `ctx.tx only; ${remedy}.`;
  const node = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } }).process;
  if (typeof node?.emitWarning === 'function') node.emitWarning(message, { code: 'SERVICE_PAY_UNGUARDED' });
  else console.warn(message);
}
