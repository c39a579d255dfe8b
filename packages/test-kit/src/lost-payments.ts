/**
 * One attempt as the sender logged it (the fields of `@service-pay/simulator`'s `DeliveryAttempt` the
 * diagnosis reads).
 */
export interface SenderAttempt {
  attempt: number;
  /** ISO time the request got its connection. */
  startedAt: string;
  latencyMs: number;
  /** The HTTP status; null for a timeout, a network error or a dropped answer. */
  status: number | null;
  /** What went wrong, in words; null for a 2xx. */
  error: string | null;
  outcome: string;
  responseBody: string;
}

/** One delivery as the sender logged it: where it went, how it ended, its attempts. */
export interface SenderDelivery {
  deliveryId: string;
  paymentId: string;
  url: string;
  state: string;
  attempts: ReadonlyArray<SenderAttempt>;
}

/** The payment's row in the store's inbox, as the test reads it back (the store commits it with the credit). */
export interface InboxRow {
  outcome: string;
  deliveryId: string | null;
}

/**
 * Why a payment has no credit:
 * - `acknowledged-without-credit`: the app answered 2xx and no credit is committed (an exactly-once defect);
 * - `inbox-without-credit`: no 2xx, but the store's inbox row committed without the credit it must commit
 *   with (a defect too);
 * - `sender-gave-up`: every attempt was refused (non-2xx, timeout, network error) until the sender's retries
 *   ran out. The service shows such a payment as failed, for reconciliation; the SDK lost nothing, but the
 *   row's fault should have left the retries enough healthy time.
 */
export type LostKind = 'acknowledged-without-credit' | 'inbox-without-credit' | 'sender-gave-up';

/** A payment without a credit, with what the sender and the store saw of it. */
export interface LostPayment {
  paymentId: string;
  kind: LostKind;
  /** Attempts answered 2xx (the defect's evidence), and attempts refused. */
  acknowledged: number;
  refusals: number;
  /** The store's inbox rows of the payment; undefined when the row's database cannot say. */
  inbox: InboxRow[] | undefined;
  deliveries: SenderDelivery[];
}

/** A fault's start or end, for the diagnosis to set each attempt against (`crashed`, `restarted`). */
export interface FaultMark {
  what: string;
  at: number;
}

const acknowledged = (a: SenderAttempt) => a.status !== null && a.status >= 200 && a.status < 300;

/**
 * Classifies the payments among `paymentIds` that `counts` (credits per payment) shows without a credit,
 * from the sender's delivery log and the store's inbox rows (`inbox`: undefined where the database cannot
 * read them).
 *
 * @example
 * ```ts
 * const lost = lostPayments(paymentIds, counts, (id) => sim.deliveries({ paymentId: id }), await db.inbox(paymentIds));
 * ```
 */
export function lostPayments(
  paymentIds: readonly string[],
  counts: ReadonlyMap<string, number>,
  deliveries: (paymentId: string) => SenderDelivery[],
  inbox: ReadonlyMap<string, InboxRow[]> | undefined,
): LostPayment[] {
  return paymentIds
    .filter((id) => (counts.get(id) ?? 0) === 0)
    .map((paymentId) => {
      const log = deliveries(paymentId);
      const attempts = log.flatMap((d) => d.attempts);
      const acks = attempts.filter(acknowledged).length;
      const rows = inbox === undefined ? undefined : (inbox.get(paymentId) ?? []);
      const kind: LostKind =
        acks > 0
          ? 'acknowledged-without-credit'
          : rows !== undefined && rows.length > 0
            ? 'inbox-without-credit'
            : 'sender-gave-up';
      return {
        paymentId,
        kind,
        acknowledged: acks,
        refusals: attempts.length - acks,
        inbox: rows,
        deliveries: log,
      };
    });
}

/**
 * The most attempts any delivery of these took to be answered 2xx (0 when none was): how close the row came
 * to the sender's last attempt. A row whose slowest delivery needs attempt 7 of 8 under load has little of
 * the retry schedule left.
 *
 * @example
 * ```ts
 * const slowest = slowestAck(paymentIds.flatMap((id) => sim.deliveries({ paymentId: id })));
 * ```
 */
export function slowestAck(deliveries: readonly SenderDelivery[]): number {
  let most = 0;
  for (const d of deliveries) {
    const n = d.attempts.findIndex(acknowledged) + 1;
    if (n > most) most = n;
  }
  return most;
}

/**
 * How many lost payments of each kind (`{ 'sender-gave-up': 4 }`); empty when nothing was lost. A row
 * compares it with `{}`, so its failure names the kind.
 *
 * @example
 * ```ts
 * expect(lostKinds(lost)).toEqual({});
 * ```
 */
export function lostKinds(lost: readonly LostPayment[]): Partial<Record<LostKind, number>> {
  const kinds: Partial<Record<LostKind, number>> = {};
  for (const p of lost) kinds[p.kind] = (kinds[p.kind] ?? 0) + 1;
  return kinds;
}

/**
 * For a payment the sender gave up on: how many of its attempts came after the fault ended. None means the
 * sender's retries ran out while the fault lasted: the row's schedule, not the SDK, is what fell short.
 */
function healthyTime(p: LostPayment, faultEnd: number | undefined): string {
  if (faultEnd === undefined) return '';
  const after = p.deliveries.flatMap((d) => d.attempts).filter((a) => Date.parse(a.startedAt) > faultEnd).length;
  return after === 0
    ? ', every attempt before the fault ended: the retries ran out during the fault'
    : `, ${after} of them after the fault ended`;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** `503 STORE_UNAVAILABLE`, `timeout`, `network-error (ECONNREFUSED)`: what one attempt got. */
function answer(a: SenderAttempt): string {
  let code = '';
  try {
    code = String((JSON.parse(a.responseBody) as { error?: unknown }).error ?? '');
  } catch {
    // Not JSON (an HTML error page, nothing at all): the status says enough.
  }
  if (a.status !== null) return [a.status, code].filter(Boolean).join(' ');
  const detail = /\b(E[A-Z]+)\b/.exec(a.error ?? '')?.[1];
  return detail === undefined ? a.outcome : `${a.outcome} (${detail})`;
}

/** A delivery and its attempts, one line each: time (and how long after the fault's end), answer, latency. */
function deliveryLines(d: SenderDelivery, faultEnd: number | undefined): string[] {
  const lines = [`  ${d.deliveryId} to ${d.url}: ${d.state}`];
  for (const a of d.attempts) {
    const at = Date.parse(a.startedAt);
    const since = faultEnd === undefined ? '' : ` (${((at - faultEnd) / 1000).toFixed(1)} s after the fault)`;
    lines.push(`    #${a.attempt} ${clock(at)}${since} ${answer(a)} in ${a.latencyMs} ms`);
  }
  return lines;
}

/**
 * The delivery that took the most attempts to be answered 2xx, in words, when it took at least `from`
 * (default 6 of the sender's 8): a row that passed close to the sender giving up shows what refused it.
 * Empty otherwise.
 *
 * @example
 * ```ts
 * console.log(describeSlowest(paymentIds.flatMap((id) => sim.deliveries({ paymentId: id })), marks));
 * ```
 */
export function describeSlowest(
  deliveries: readonly SenderDelivery[],
  marks: readonly FaultMark[] = [],
  from = 6,
): string {
  let slowest: SenderDelivery | undefined;
  let most = 0;
  for (const d of deliveries) {
    const n = d.attempts.findIndex(acknowledged) + 1;
    if (n > most) [slowest, most] = [d, n];
  }
  if (slowest === undefined || most < from) return '';
  const faultEnd = marks.length === 0 ? undefined : Math.max(...marks.map((m) => m.at));
  return [`SLOWEST ${slowest.paymentId}: answered 2xx at attempt ${most}`, ...deliveryLines(slowest, faultEnd)].join(
    '\n',
  );
}

/**
 * The lost payments in words, one block each: the verdict (`sender gave up after 16 refusals`,
 * `acknowledged without credit (1 x 2xx)`), the store's inbox rows, then each delivery's attempts with their
 * time, answer and latency, set against the row's fault `marks`. Empty for no loss.
 *
 * @example
 * ```ts
 * console.log(describeLost(lost, [{ what: 'crashed', at: downAt }, { what: 'restarted', at: upAt }]));
 * ```
 */
export function describeLost(lost: readonly LostPayment[], marks: readonly FaultMark[] = []): string {
  if (lost.length === 0) return '';
  const lines: string[] = [];
  if (marks.length > 0) lines.push(`fault: ${marks.map((m) => `${m.what} ${clock(m.at)}`).join(', ')}`);
  const faultEnd = marks.length === 0 ? undefined : Math.max(...marks.map((m) => m.at));
  for (const p of lost) {
    const verdict =
      p.kind === 'acknowledged-without-credit'
        ? `ACKNOWLEDGED WITHOUT CREDIT (${p.acknowledged} x 2xx, ${p.refusals} refused)`
        : p.kind === 'inbox-without-credit'
          ? `INBOX ROW WITHOUT CREDIT (${p.refusals} refused)`
          : `sender gave up after ${p.refusals} refusals${healthyTime(p, faultEnd)}`;
    const inbox =
      p.inbox === undefined
        ? 'not read'
        : p.inbox.length === 0
          ? 'none'
          : p.inbox.map((r) => `${r.outcome} by ${r.deliveryId ?? '?'}`).join('; ');
    lines.push(`LOST ${p.paymentId}: ${verdict}; inbox: ${inbox}`);
    for (const d of p.deliveries) lines.push(...deliveryLines(d, faultEnd));
  }
  return lines.join('\n');
}

/**
 * The inbox rows a SQL query returned (`payment_id`, `outcome`, `delivery_id`), grouped by payment.
 *
 * @example
 * ```ts
 * const { rows } = await db.query('select payment_id, outcome, delivery_id from service_pay_inbox where payment_id = any($1)', [ids]);
 * return inboxByPayment(rows);
 * ```
 */
export function inboxByPayment(
  rows: ReadonlyArray<{ payment_id: string; outcome: string; delivery_id: string | null }>,
): Map<string, InboxRow[]> {
  const byPayment = new Map<string, InboxRow[]>();
  for (const r of rows) {
    const list = byPayment.get(r.payment_id) ?? [];
    list.push({ outcome: r.outcome, deliveryId: r.delivery_id });
    byPayment.set(r.payment_id, list);
  }
  return byPayment;
}
