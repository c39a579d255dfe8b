/*
 * PGlite as the store's public types describe it, written out structurally so that the package's type
 * declarations import nothing from '@electric-sql/pglite': an app on node-postgres alone compiles without
 * it (and without skipLibCheck). A `PGlite` is assignable to `PGliteLike`, and PGlite's `Transaction` to
 * `PGliteTransaction` (tested).
 */

/**
 * The result of a PGlite query.
 *
 * @example
 * ```ts
 * const { rows } = (await tx.query<{ n: number }>('select 1 as n')) satisfies PGliteResults<{ n: number }>;
 * ```
 */
export interface PGliteResults<T = Record<string, unknown>> {
  rows: T[];
  affectedRows?: number;
  fields: { name: string; dataTypeID: number }[];
}

/**
 * The delivery's transaction on PGlite, as `ctx.tx` gives it: PGlite's `Transaction`.
 *
 * @example
 * ```ts
 * const onPaymentPaid = async (event: PaymentPaidEvent, ctx: { tx: PGliteTransaction }) => {
 *   await ctx.tx.query('update orders set paid = true where order_no = $1', [event.orderNo]);
 * };
 * ```
 */
export interface PGliteTransaction {
  query<T>(query: string, params?: unknown[], options?: object): Promise<PGliteResults<T>>;
  sql<T>(strings: TemplateStringsArray, ...params: unknown[]): Promise<PGliteResults<T>>;
  exec(query: string, options?: object): Promise<Array<PGliteResults>>;
  rollback(): Promise<void>;
  listen(channel: string, callback: (payload: string) => void): Promise<unknown>;
  readonly closed: boolean;
}

/**
 * A PGlite database (`PGlite` or `PGliteWorker`), as the store uses it.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * const pglite: PGliteLike = await PGlite.create();
 * ```
 */
export interface PGliteLike {
  query<T>(query: string, params?: unknown[], options?: object): Promise<PGliteResults<T>>;
  exec(query: string, options?: object): Promise<Array<PGliteResults>>;
  transaction<T>(callback: (tx: PGliteTransaction) => Promise<T>): Promise<T>;
}
