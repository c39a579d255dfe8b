import type { DeliveryAttempt, DeliveryAttemptEvent, DeliveryRecord } from '../core/delivery-log.js';

/** One line per delivery attempt, as `simulate`, `listen` and `trigger` print them. */
export function attemptLine({ delivery, attempt }: DeliveryAttemptEvent): string {
  const next = attempt.nextRetryInMs === null ? ` -> ${delivery.state}` : `; retry in ${attempt.nextRetryInMs} ms`;
  return `${attempt.startedAt} ${delivery.deliveryId} ${delivery.paymentId} attempt ${attempt.attempt}: ${result(attempt)} (${attempt.latencyMs} ms)${next}`;
}

/**
 * What an attempt got: the status and the start of the answer, or what went wrong. A refusal names the
 * receiver's error code when the answer carries one (`HTTP 401 SIGNATURE_MISMATCH: ...`), so a wrong
 * secret reads as one at a glance.
 */
export function result(attempt: DeliveryAttempt): string {
  if (attempt.status !== null && attempt.error === null) {
    const body = printable(attempt.responseBody);
    return `${attempt.status}${body ? ` ${clip(body)}` : ''}`;
  }
  if (attempt.outcome === 'http-error' && attempt.status !== null) {
    const refusal = receiverError(attempt.responseBody);
    if (refusal !== null) return `HTTP ${attempt.status} ${refusal}`;
    // A framework's own "not found" page: no route at the forwarded path, said so instead of the page's markup.
    if (attempt.status === 404 && /^\s*<(!doctype|html|head|body)\b/i.test(attempt.responseBody))
      return 'HTTP 404 (an HTML page): no route at this path';
    const body = printable(attempt.responseBody);
    return `HTTP ${attempt.status}${body ? ` ${clip(body)}` : ''}`;
  }
  return attempt.error ?? `${attempt.status}`;
}

/**
 * The receiver's error code and message from a service-pay style answer (`{"error": "CODE", "message":
 * "..."}`, or `{"error": {"code", "message"}}`), or null when the answer is not one. The message whole,
 * on one line: a fix is often at its end.
 *
 * @example
 * ```ts
 * receiverRefusal('{"error":"MISSING_SIGNATURE","message":"No X-Service-Signature header."}');
 * // { code: 'MISSING_SIGNATURE', message: 'No X-Service-Signature header.' }
 * ```
 */
export function receiverRefusal(responseBody: string): { code: string; message: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(responseBody);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { error, message } = parsed as { error?: unknown; message?: unknown };
  const nested = typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown }) : null;
  const code = nested !== null ? nested.code : error;
  const text = nested !== null ? nested.message : message;
  if (typeof code !== 'string' || !/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(code)) return null;
  return { code, message: typeof text === 'string' ? printable(text) : '' };
}

/** `receiverRefusal` as one clipped line for a table or an attempt line: `CODE: start of the message...`. */
export function receiverError(responseBody: string): string | null {
  const refusal = receiverRefusal(responseBody);
  if (refusal === null) return null;
  return refusal.message !== '' ? `${refusal.code}: ${clip(refusal.message)}` : refusal.code;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point (escape sequences).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** One line of text a terminal shows as it is: whitespace runs become one space, control characters go. */
function printable(text: string): string {
  return text.replace(/\s+/g, ' ').replace(CONTROL, '').trim();
}

const clip = (text: string): string => (text.length > 80 ? `${text.slice(0, 80)}...` : text);

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
