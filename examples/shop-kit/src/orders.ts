import type { Database, Queryable } from './database.ts';

/** An order of the example shop. */
export interface Order {
  id: string;
  amount: string;
  tokenSymbol: string;
  status: 'PENDING' | 'PAID' | 'REJECTED';
  paymentId: string | null;
  /** How many credits were written for this order: exactly-once means 1 after payment, never more. */
  credits: number;
  /** What credited it: a `webhook`, or `reconciliation` (its webhooks never arrived); null until credited. */
  creditedBy: 'webhook' | 'reconciliation' | null;
}

/** One credit, as written into `credits`. */
export interface CreditInput {
  orderId: string;
  paymentId: string;
  amount: string;
  source: 'webhook' | 'reconciliation';
}

/**
 * How a credit is kept to once:
 * - `inbox`: a transactional store's inbox row commits in the same transaction (its key is the guard), so
 *   the insert is plain: a second one would fail loudly, never hide.
 * - `unique-payment-id`: a lease store's record lives elsewhere, so the unique paymentId of `credits` is
 *   the last guard: a second credit of the payment changes nothing (`already-credited`).
 */
export type CreditGuard = 'inbox' | 'unique-payment-id';

/**
 * The shop's orders and their credits.
 *
 * `credits.payment_id` is unique, so with a lease store (Redis) a duplicate the store let through changes
 * nothing: the cases a store cannot cover (a crash between the commit and the store's `complete`, a Redis
 * that lost its data, a retry after the retention window). With `PostgresStore` the credit commits with the
 * store's inbox row instead, and a rejection is recorded there (the handler's writes roll back), so an
 * order whose payment the inbox says was rejected reads as `REJECTED`.
 */
export class OrderBook {
  readonly #orders: string;
  readonly #credits: string;
  readonly #status: string;

  private constructor(
    private readonly db: Database,
    prefix: string,
    inboxTable: string | undefined,
  ) {
    this.#orders = `${prefix}orders`;
    this.#credits = `${prefix}credits`;
    this.#status =
      inboxTable === undefined
        ? 'o.status'
        : `case when o.status = 'PENDING' and exists (select 1 from "${inboxTable}" i
             where i.payment_id = o.payment_id and i.outcome = 'rejected') then 'REJECTED' else o.status end`;
  }

  /**
   * Creates the tables if missing. `prefix` lets several runs share one PostgreSQL database; `inboxTable`
   * is `PostgresStore`'s table, when the shop uses it (rejections are recorded there).
   */
  static async open(
    db: Database,
    options: { prefix?: string; inboxTable?: string | undefined } = {},
  ): Promise<OrderBook> {
    const book = new OrderBook(db, options.prefix ?? '', options.inboxTable);
    await db.query(`create table if not exists ${book.#orders} (
      id text primary key,
      amount text not null,
      token_symbol text not null,
      status text not null default 'PENDING',
      payment_id text unique,
      created_at timestamptz not null default now()
    )`);
    // No txId column: a credit made by reconciliation has none (reading a payment does not return it).
    await db.query(`create table if not exists ${book.#credits} (
      payment_id text primary key,
      order_id text not null references ${book.#orders}(id),
      amount text not null,
      source text not null,
      credited_at timestamptz not null default now()
    )`);
    return book;
  }

  async create(order: { id: string; amount: string; tokenSymbol: string }): Promise<Order> {
    await this.db.query(`insert into ${this.#orders} (id, amount, token_symbol) values ($1, $2, $3)`, [
      order.id,
      order.amount,
      order.tokenSymbol,
    ]);
    return { ...order, status: 'PENDING', paymentId: null, credits: 0, creditedBy: null };
  }

  async attachPayment(orderId: string, paymentId: string): Promise<void> {
    await this.db.query(`update ${this.#orders} set payment_id = $2 where id = $1`, [orderId, paymentId]);
  }

  async get(orderId: string): Promise<Order | undefined> {
    return (await this.#select('where o.id = $1', [orderId]))[0];
  }

  async list(): Promise<Order[]> {
    return this.#select('', []);
  }

  /**
   * The payments of orders still pending after `olderThanMs`, oldest first, at most `limit`: what a
   * reconciliation pass reads back. Orders older than `notOlderThanMs` are left alone, so one that is never
   * paid is not read every minute forever.
   */
  async pendingPaymentIds(options: { olderThanMs: number; notOlderThanMs: number; limit: number }): Promise<string[]> {
    const rows = await this.db.query<{ payment_id: string }>(
      `select o.payment_id from ${this.#orders} o
       where o.payment_id is not null and ${this.#status} = 'PENDING'
         and o.created_at <= now() - $1 * interval '1 millisecond'
         and o.created_at > now() - $2 * interval '1 millisecond'
       order by o.created_at, o.id limit $3`,
      [options.olderThanMs, options.notOlderThanMs, options.limit],
    );
    return rows.map((r) => r.payment_id);
  }

  /** The order a payment is for, locked for this transaction (two payments of one order take turns). */
  async lockForCredit(tx: Queryable, orderId: string): Promise<Omit<Order, 'credits' | 'creditedBy'> | undefined> {
    const { rows } = await tx.query(
      `select id, amount, token_symbol, status, payment_id from ${this.#orders} where id = $1 for update`,
      [orderId],
    );
    const row = rows[0] as
      | { id: string; amount: string; token_symbol: string; status: Order['status']; payment_id: string | null }
      | undefined;
    return (
      row && {
        id: row.id,
        amount: row.amount,
        tokenSymbol: row.token_symbol,
        status: row.status,
        paymentId: row.payment_id,
      }
    );
  }

  /**
   * Writes the credit and marks the order paid, in `tx`. `already-credited` only with the
   * `unique-payment-id` guard, when this payment was credited before (the database caught a duplicate).
   */
  async credit(tx: Queryable, input: CreditInput, guard: CreditGuard): Promise<'credited' | 'already-credited'> {
    const { rows } = await tx.query(
      `insert into ${this.#credits} (payment_id, order_id, amount, source) values ($1, $2, $3, $4)
       ${guard === 'unique-payment-id' ? 'on conflict (payment_id) do nothing' : ''} returning payment_id`,
      [input.paymentId, input.orderId, input.amount, input.source],
    );
    if (rows.length === 0) return 'already-credited';
    await tx.query(`update ${this.#orders} set status = 'PAID' where id = $1`, [input.orderId]);
    return 'credited';
  }

  /** Marks an order REJECTED for a person to look at (lease store: the rejection is not recorded elsewhere). */
  async reject(orderId: string): Promise<void> {
    await this.db.query(`update ${this.#orders} set status = 'REJECTED' where id = $1 and status = 'PENDING'`, [
      orderId,
    ]);
  }

  async #select(where: string, params: unknown[]): Promise<Order[]> {
    const rows = await this.db.query<{
      id: string;
      amount: string;
      token_symbol: string;
      status: Order['status'];
      payment_id: string | null;
      credits: string | number;
      credited_by: Order['creditedBy'];
    }>(
      `select o.id, o.amount, o.token_symbol, ${this.#status} as status, o.payment_id,
              (select count(*) from ${this.#credits} c where c.order_id = o.id) as credits,
              (select min(c.source) from ${this.#credits} c where c.order_id = o.id) as credited_by
       from ${this.#orders} o ${where} order by o.created_at, o.id`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      amount: r.amount,
      tokenSymbol: r.token_symbol,
      status: r.status,
      paymentId: r.payment_id,
      credits: Number(r.credits),
      creditedBy: r.credited_by,
    }));
  }
}
