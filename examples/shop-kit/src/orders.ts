import type { Database } from './database.ts';

/** An order of the example shop. */
export interface Order {
  id: string;
  amount: string;
  tokenSymbol: string;
  status: 'PENDING' | 'PAID' | 'REJECTED';
  paymentId: string | null;
  /** How many credits were written for this order: exactly-once means 1 after payment, never more. */
  credits: number;
}

export interface CreditInput {
  orderId: string;
  paymentId: string;
  amount: string;
  txId: string;
}

/**
 * The shop's orders, and the credit that must happen exactly once.
 *
 * `credit` inserts the payment into `credits`, whose primary key is the paymentId, in the same
 * transaction that marks the order paid. The dedupe store in front of it is a fast filter; this unique
 * key is the last guard, for the cases a store cannot cover (a crash between the commit and the store's
 * `complete`, a Redis that lost its data, a retry after the retention window).
 */
export class OrderBook {
  constructor(private readonly db: Database) {}

  /** Creates the tables. `prefix` lets several test runs share one PostgreSQL database. */
  static async open(db: Database, prefix = ''): Promise<OrderBook> {
    const book = new OrderBook(db);
    book.#orders = `${prefix}orders`;
    book.#credits = `${prefix}credits`;
    await db.query(`create table if not exists ${book.#orders} (
      id text primary key,
      amount text not null,
      token_symbol text not null,
      status text not null default 'PENDING',
      payment_id text unique,
      created_at timestamptz not null default now()
    )`);
    await db.query(`create table if not exists ${book.#credits} (
      payment_id text primary key,
      order_id text not null references ${book.#orders}(id),
      amount text not null,
      tx_id text not null,
      credited_at timestamptz not null default now()
    )`);
    return book;
  }

  #orders = 'orders';
  #credits = 'credits';

  async create(order: { id: string; amount: string; tokenSymbol: string }): Promise<Order> {
    await this.db.query(`insert into ${this.#orders} (id, amount, token_symbol) values ($1, $2, $3)`, [
      order.id,
      order.amount,
      order.tokenSymbol,
    ]);
    return { ...order, status: 'PENDING', paymentId: null, credits: 0 };
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
   * Credits the order once: `credited` the first time, `already-credited` when this payment was credited
   * before (the database caught a duplicate the store let through). `beforeCommit` runs inside the
   * transaction, last, so a lost lease can still roll the credit back.
   */
  async credit(
    input: CreditInput,
    beforeCommit?: () => void | Promise<void>,
  ): Promise<'credited' | 'already-credited'> {
    return this.db.transaction(async (tx) => {
      const inserted = await tx.query(
        `insert into ${this.#credits} (payment_id, order_id, amount, tx_id) values ($1, $2, $3, $4)
         on conflict (payment_id) do nothing returning payment_id`,
        [input.paymentId, input.orderId, input.amount, input.txId],
      );
      if (inserted.length === 0) return 'already-credited';
      await tx.query(`update ${this.#orders} set status = 'PAID' where id = $1`, [input.orderId]);
      await beforeCommit?.();
      return 'credited';
    });
  }

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
    }>(
      `select o.id, o.amount, o.token_symbol, o.status, o.payment_id,
              (select count(*) from ${this.#credits} c where c.order_id = o.id) as credits
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
    }));
  }
}
