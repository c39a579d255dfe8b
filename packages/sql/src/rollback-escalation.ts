import type { Interruption } from './dialect.js';

/** How long a rollback may queue behind a running statement before that statement is interrupted. */
export const ROLLBACK_GRACE_MS = 200;
/** How long an interrupted statement may take to end before its whole session is ended. */
export const INTERRUPT_GRACE_MS = 1_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * Rolls a transaction back even when a statement of the handler still runs on it (a deadline hit
 * mid-statement). Clients queue their ROLLBACK behind that statement, so if the rollback has not ended
 * within 200 ms, `interrupt('statement')` stops the statement from another connection, and if even that
 * has not ended it within a second, `interrupt('session')` ends the session (the server then rolls back).
 * Either way the key is free at once and nothing the handler sent commits. Never rejects.
 *
 * `interrupt` is called only while the rollback has not ended, and is given `wanted()`, which says whether
 * that is still so: an interruption that waits for a connection of a full pool may get one only after the
 * rollback ended and the connection it means went to another delivery, so it checks `wanted()` once it has
 * its connection and stops nothing if the rollback is over.
 *
 * @example
 * ```ts
 * await rollBackInterrupting(
 *   () => held.rollback(),
 *   async (how, wanted) => {
 *     const killer = await pool.getConnection(); // may wait
 *     try {
 *       if (wanted()) await killer.query(how === 'statement' ? 'KILL QUERY ?' : 'KILL ?', [connectionId]);
 *     } finally {
 *       killer.release();
 *     }
 *   },
 * );
 * ```
 */
export async function rollBackInterrupting(
  rollback: () => Promise<unknown>,
  interrupt: (how: Interruption, wanted: () => boolean) => Promise<void>,
): Promise<void> {
  let settled = false;
  const rolledBack = rollback().then(
    () => (settled = true),
    () => (settled = true),
  );
  const wanted = () => !settled;
  const within = (ms: number) => Promise.race([rolledBack, pause(ms).then(() => false)]);
  if (await within(ROLLBACK_GRACE_MS)) return;
  // An interruption that cannot get a connection (a full pool) must not hold the rollback up either.
  const send = (how: Interruption) =>
    Promise.race([interrupt(how, wanted).catch(() => undefined), pause(INTERRUPT_GRACE_MS)]);
  if (!settled) await send('statement');
  if (await within(INTERRUPT_GRACE_MS)) return;
  if (!settled) await send('session');
  await rolledBack;
}
