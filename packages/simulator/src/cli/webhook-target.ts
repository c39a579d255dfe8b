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
 * The header that marks the check. `@service-pay/core` answers an unsigned request carrying it as any other
 * (401 MISSING_SIGNATURE) but logs it at debug, not as a refused delivery: a developer starting `listen`
 * must not read a refusal in the app's log that no payment caused.
 */
export const PROBE_HEADER = 'x-service-pay-probe';

/**
 * Sends one unsigned POST with an empty JSON object to the app's webhook URL, as no payment ever would:
 * a route that verifies signatures answers 401, which is how `listen` knows the route exists without
 * knowing the secret. It is a POST because only a POST reaches the webhook route in every framework (an
 * OPTIONS or HEAD is answered by Express itself, and is a 404 in Fastify and Hono); it carries
 * `PROBE_HEADER`, so an app on `@service-pay/core` logs it at debug only.
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
      headers: {
        'content-type': 'application/json',
        'user-agent': 'service-pay-listen-check',
        [PROBE_HEADER]: 'listen',
      },
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
