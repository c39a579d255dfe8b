import type { DeliveryAttempt } from '../core/delivery-log.js';
import { receiverError } from './format.js';

/**
 * What `listen` found at the `--forward-to` URL when it started: whether anything answers, and whether
 * the route is there. `ok` false is advice, not a failure: the app may simply start after `listen`.
 */
export interface TargetCheck {
  url: string;
  /** The HTTP status of the unsigned POST; null when nothing answered. */
  status: number | null;
  ok: boolean;
  /** One line for the terminal. */
  summary: string;
}

const looksHtml = (body: string) => /^\s*<(!doctype|html|head|body)\b/i.test(body);

/**
 * Sends one unsigned POST with an empty JSON object to the app's webhook URL, as no payment ever would:
 * a route that verifies signatures answers 401, which is how `listen` knows the route exists without
 * knowing the secret. (The app logs it as a refused delivery, `MISSING_SIGNATURE`.)
 *
 * @example
 * ```ts
 * const check = await checkWebhookTarget('http://127.0.0.1:3000/webhooks/service');
 * console.log(check.summary); // "... answers an unsigned POST with 401 MISSING_SIGNATURE: the webhook route is there"
 * ```
 */
export async function checkWebhookTarget(url: string, timeoutMs = 3_000): Promise<TargetCheck> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'service-pay-listen-check' },
      body: '{}',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return {
      url,
      status: null,
      ok: false,
      summary: `nothing answers at ${url} yet (${cause}): start your app there; webhooks are forwarded once it answers, and each attempt is printed below`,
    };
  }
  const body = (await response.text().catch(() => '')).slice(0, 2_000);
  const status = response.status;
  const code = receiverError(body)?.split(':')[0];
  const said = `${url} answers an unsigned POST with ${status}${code ? ` ${code}` : ''}`;
  if (status === 401)
    return { url, status, ok: true, summary: `${said}: the webhook route is there and checks signatures` };
  if (status === 404)
    return {
      url,
      status,
      ok: false,
      summary: `${said}${looksHtml(body) ? ' (an HTML page)' : ''}: no route at this path. Check the path of the app's webhook route (the POST route given to serviceWebhook) against --forward-to`,
    };
  if (status === 405)
    return { url, status, ok: false, summary: `${said}: this path exists but takes no POST; is it the webhook route?` };
  if (status >= 200 && status < 300)
    return {
      url,
      status,
      ok: false,
      summary: `${said}: this route accepted a request without a signature, so it does not verify webhooks; is it the webhook route?`,
    };
  return { url, status, ok: false, summary: `${said}: not the 401 a webhook route answers to an unsigned request` };
}

/**
 * The fix for a first attempt that failed because of the app's set-up, not by chance: a wrong secret, a
 * wrong path, nothing listening. Null when the failure is one the sender's retries may well get past (a
 * 409 while a duplicate is handled, a 500, a 503, a timeout, a dropped answer).
 *
 * @example
 * ```ts
 * setupProblem(attempt, 'http://127.0.0.1:3000/webhooks/service'); // "the app's webhook secret differs ..."
 * ```
 */
export function setupProblem(attempt: DeliveryAttempt, target: string): string | null {
  if (attempt.outcome === 'network-error')
    return `nothing answers at ${target}: start your app, or point --forward-to at where it listens`;
  if (attempt.outcome !== 'http-error' || attempt.status === null) return null;
  const code = receiverError(attempt.responseBody)?.split(':')[0];
  switch (attempt.status) {
    case 401:
      return `the app refused the signature (${code ?? '401'}): its webhook secret differs from the one 'service-pay listen' printed (SERVICE_WEBHOOK_SECRET=..., kept in .service-pay/dev-secrets.json); set it in the app's environment and restart the app`;
    case 404:
      return `no route at this path${looksHtml(attempt.responseBody) ? ' (the app answered with an HTML 404 page)' : ''}: check the path of the app's webhook route against ${target}`;
    case 405:
      return `${target} takes no POST: is it the webhook route?`;
    case 413:
    case 415:
      return `the app refused the body itself (${code ?? attempt.status}): something in front of the webhook route (a body parser, a proxy) changes the request`;
    default:
      return null;
  }
}
