import { sql } from 'drizzle-orm';
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** The shop's orders. `paymentId` is the payment the service made for it (set once the service answers). */
export const orders = pgTable('drizzle_shop_orders', {
  id: text('id').primaryKey(),
  amount: text('amount').notNull(),
  tokenSymbol: text('token_symbol').notNull(),
  status: text('status', { enum: ['PENDING', 'PAID'] })
    .notNull()
    .default('PENDING'),
  paymentId: text('payment_id').unique(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One row per credit. Deliberately no unique key on `payment_id`: the credit commits with the store's
 * inbox row (`ctx.tx`), so a second credit cannot happen, and the tests count rows to prove it.
 */
export const credits = pgTable('drizzle_shop_credits', {
  paymentId: text('payment_id').notNull(),
  orderId: text('order_id')
    .notNull()
    .references(() => orders.id),
  amount: text('amount').notNull(),
  source: text('source', { enum: ['webhook', 'reconciliation'] }).notNull(),
  creditedAt: timestamp('credited_at', { withTimezone: true }).notNull().defaultNow(),
});

/** `DrizzleStore`'s table: the record of every handled payment, and of why a rejected one was rejected. */
export const INBOX_TABLE = 'drizzle_shop_inbox';

/**
 * The tables, as plain SQL: an example needs no migration tool (in an app, `drizzle-kit generate` writes
 * the same from `schema.ts`). Idempotent.
 */
export const createTables = [
  sql`create table if not exists drizzle_shop_orders (
    id text primary key,
    amount text not null,
    token_symbol text not null,
    status text not null default 'PENDING',
    payment_id text unique,
    created_at timestamptz not null default now()
  )`,
  sql`create table if not exists drizzle_shop_credits (
    payment_id text not null,
    order_id text not null references drizzle_shop_orders(id),
    amount text not null,
    source text not null,
    credited_at timestamptz not null default now()
  )`,
];
