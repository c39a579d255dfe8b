import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { signWebhook } from '@service-pay/core';
import { type PostResult, postWebhook } from '../core/post-webhook.js';
import { integerFlag, parse, requireFlag } from './args.js';
import type { Io } from './io.js';
import { readSecret, WEBHOOK_SECRET } from './secret-source.js';
import { EXIT, UsageError } from './usage-error.js';
import { EVENT_FLAGS, EVENT_HELP, eventBody } from './webhook-event.js';

export const SEND_HELP = `Usage: service-pay send --url URL [options]   (the secret from SERVICE_WEBHOOK_SECRET)

Signs payment.paid deliveries exactly as the service does and POSTs them to your endpoint, printing
each answer. Each delivery gets a fresh dl_ id; all carry the same body.

Options:
  --url URL               your webhook endpoint (required)
  --secret-file FILE      read the merchant's webhook secret from FILE (else $SERVICE_WEBHOOK_SECRET)
  --secret SECRET         the same on the command line (visible in ps: a warning)
  --duplicates N          extra deliveries of the same event, default 0
  --concurrent            send all deliveries at once instead of one after another
  --clock-skew-sec N      sign with now + N seconds (test your tolerance check)
  --timeout-ms MS         per delivery, default 5000
  --json                  print { ok, body, deliveries: [{ deliveryId, status, responseBody, ... }] }
  -h, --help              show this help

${EVENT_HELP}

Exit codes: 0 every delivery got a 2xx, 1 some did not (or got no answer), 2 bad flags.

Example:
  service-pay send --url http://127.0.0.1:3000/webhooks/service --secret whsec_test --duplicates 2 --concurrent`;

const FLAGS = {
  url: { type: 'string' },
  secret: { type: 'string' },
  'secret-file': { type: 'string' },
  duplicates: { type: 'string' },
  concurrent: { type: 'boolean' },
  'clock-skew-sec': { type: 'string' },
  'timeout-ms': { type: 'string' },
  json: { type: 'boolean' },
  ...EVENT_FLAGS,
} as const;

export async function sendCommand(args: string[], io: Io): Promise<number> {
  const values = parse(args, FLAGS);
  if (values.help) {
    io.out(SEND_HELP);
    return EXIT.OK;
  }
  const url = requireFlag(values.url, 'url', 'the endpoint to send to');
  if (!/^https?:\/\//.test(url) || !URL.canParse(url))
    throw new UsageError(`--url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  const secret = readSecret(io, values.secret, values['secret-file'], WEBHOOK_SECRET);
  const duplicates = integerFlag(values.duplicates, 'duplicates') ?? 0;
  if (duplicates < 0 || duplicates > 1000) throw new UsageError('--duplicates must be from 0 to 1000');
  const skew = integerFlag(values['clock-skew-sec'], 'clock-skew-sec') ?? 0;
  const timeoutMs = integerFlag(values['timeout-ms'], 'timeout-ms') ?? 5000;
  if (timeoutMs < 1 || timeoutMs > 600_000) throw new UsageError('--timeout-ms must be from 1 to 600000');
  const body = eventBody(values);

  const agents = { http: new Agent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const total = duplicates + 1;
  const json = values.json === true;
  const results: Array<{ deliveryId: string } & PostResult> = [];
  const one = async (index: number): Promise<boolean> => {
    const { headers } = signWebhook({ event: body, secret, timestamp: Math.floor(Date.now() / 1000) + skew });
    const result = await postWebhook(new URL(url), body, headers, timeoutMs, agents).result;
    const deliveryId = headers['x-service-delivery'] as string;
    results[index] = { deliveryId, ...result };
    if (!json) io.out(`#${index + 1}/${total} ${deliveryId} ${describe(result)}`);
    return result.status !== null && result.status >= 200 && result.status < 300;
  };
  try {
    if (!json)
      io.err(
        `POST ${url}  paymentId ${safePaymentId(body)}  ${total} ${total === 1 ? 'delivery' : 'deliveries'}${values.concurrent ? ' at once' : ''}`,
      );
    let ok: boolean[];
    if (values.concurrent) ok = await Promise.all(Array.from({ length: total }, (_, i) => one(i)));
    else {
      ok = [];
      for (let i = 0; i < total; i += 1) ok.push(await one(i));
    }
    const allOk = ok.every(Boolean);
    if (json) {
      const deliveries = results.map((r) => ({ ...r, startedAt: new Date(r.startedAt).toISOString() }));
      io.out(JSON.stringify({ ok: allOk, url, body, deliveries }, null, 2));
    }
    return allOk ? EXIT.OK : EXIT.FAILURE;
  } finally {
    agents.http.destroy();
    agents.https.destroy();
  }
}

function describe(r: PostResult): string {
  if (r.error !== null)
    return `-> no answer: ${r.error.kind === 'timeout' ? 'timeout, ' : ''}${r.error.message} (${r.latencyMs} ms)`;
  const body = r.responseBody.replace(/\s+/g, ' ').trim();
  return `-> ${r.status}${body ? ` ${body}` : ''} (${r.latencyMs} ms)`;
}

function safePaymentId(body: string): string {
  try {
    const id = (JSON.parse(body) as { paymentId?: unknown }).paymentId;
    return typeof id === 'string' ? id : '(none)';
  } catch {
    return '(body is not JSON)';
  }
}
