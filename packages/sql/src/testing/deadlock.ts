/**
 * A connection of the test's own, outside the store's client (its pool refuses a transaction of the app's).
 *
 * @example
 * ```ts
 * const other: OtherConnection = await mysql.createConnection({ uri });
 * ```
 */
export interface OtherConnection {
  query(text: string): Promise<unknown>;
}

/**
 * Makes a deadlock between the delivery's transaction (statements sent with `mine`, through `ctx.tx`) and
 * another one on `other`, which the server settles by rolling the delivery's back: the other transaction
 * writes 200 rows first, so the delivery's is the lighter one. Each takes one row of `rows` (a table with
 * rows 1 and 2, `id` its primary key), then asks for the other's; whichever request arrives second closes the
 * cycle. Resolves with the error the delivery's request got (the deadlock), once the other has committed.
 *
 * @example
 * ```ts
 * const deadlocked = await deadlockWithDelivery((text) => tx.query(text), other, rows);
 * ```
 */
export async function deadlockWithDelivery(
  mine: (text: string) => PromiseLike<unknown>,
  other: OtherConnection,
  rows: string,
): Promise<unknown> {
  await mine(`update ${rows} set v = v + 1 where id = 1`);
  await other.query('begin');
  await other.query(`insert into ${rows}_bulk values ${Array.from({ length: 200 }, (_, i) => `(${i})`).join(', ')}`);
  await other.query(`update ${rows} set v = v + 1 where id = 2`);
  const delivery = Promise.resolve(mine(`update ${rows} set v = v + 1 where id = 2`));
  const others = other.query(`update ${rows} set v = v + 1 where id = 1`);
  const deadlocked = await delivery.then(
    () => undefined,
    (error: unknown) => error,
  );
  await others;
  await other.query('commit');
  return deadlocked;
}

/** The statements that make `deadlockWithDelivery`'s tables (`rows` and `rows_bulk`), and drop them. */
export function deadlockTables(rows: string): { create: string[]; drop: string } {
  return {
    create: [
      `create table ${rows} (id int primary key, v int not null)`,
      `insert into ${rows} values (1, 0), (2, 0)`,
      `create table ${rows}_bulk (id int not null)`,
    ],
    drop: `drop table if exists ${rows}, ${rows}_bulk`,
  };
}
