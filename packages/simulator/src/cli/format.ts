import type { DeliveryAttempt, DeliveryAttemptEvent, DeliveryRecord } from '../core/delivery-log.js';

/** One line per delivery attempt, as `simulate`, `listen` and `trigger` print them. */
export function attemptLine({ delivery, attempt }: DeliveryAttemptEvent): string {
  const next = attempt.nextRetryInMs === null ? ` -> ${delivery.state}` : `; retry in ${attempt.nextRetryInMs} ms`;
  return `${attempt.startedAt} ${delivery.deliveryId} ${delivery.paymentId} attempt ${attempt.attempt}: ${result(attempt)} (${attempt.latencyMs} ms)${next}`;
}

/** What an attempt got: the status and the start of the answer, or what went wrong. */
export function result(attempt: DeliveryAttempt): string {
  if (attempt.status !== null && attempt.error === null) {
    const body = attempt.responseBody.replace(/\s+/g, ' ').trim();
    return `${attempt.status}${body ? ` ${body.length > 80 ? `${body.slice(0, 80)}...` : body}` : ''}`;
  }
  return attempt.error ?? `${attempt.status}`;
}

/** The delivery log as a plain table, newest last. */
export function deliveryTable(deliveries: DeliveryRecord[]): string {
  const rows = deliveries.map((d) => {
    const last = d.attempts.at(-1);
    return [
      d.createdAt,
      d.deliveryId,
      d.paymentId,
      d.kind,
      d.state,
      String(d.attempts.length),
      last === undefined ? '-' : result(last),
    ];
  });
  const head = ['created', 'delivery', 'payment', 'kind', 'state', 'attempts', 'last answer'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
