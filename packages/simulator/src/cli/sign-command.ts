import { signApiRequest } from '@service-pay/client';
import { signWebhook } from '@service-pay/core';
import { integerFlag, parse, requireFlag, withoutTrailingSlashes } from './args.js';
import type { Io } from './io.js';
import { API_SECRET, readSecret, WEBHOOK_SECRET } from './secret-source.js';
import { curlCommand } from './shell-quote.js';
import { EXIT, UsageError } from './usage-error.js';
import { EVENT_FLAGS, EVENT_HELP, eventBody } from './webhook-event.js';

export const SIGN_HELP = `Usage: service-pay sign [options]      sign a payment.paid webhook (secret: SERVICE_WEBHOOK_SECRET)
       service-pay sign api --api-key KEY --api-secret SECRET --path PATH [options]
                                                         sign a merchant API request

Prints the headers, the body and a ready curl command.

Webhook options:
  --secret-file FILE      read the merchant's webhook secret from FILE (else $SERVICE_WEBHOOK_SECRET)
  --secret SECRET         the same on the command line (visible in ps: a warning)
  --url URL               target of the curl command, default http://127.0.0.1:3000/webhooks/service
  --timestamp T           Unix seconds to sign with, default now
  --delivery-id ID        default: a fresh dl_ id
  --json                  print { headers, body, curl } as JSON
  -h, --help              show this help

${EVENT_HELP}

Run 'service-pay sign api --help' for the merchant API variant.`;

export const SIGN_API_HELP = `Usage: service-pay sign api --api-key KEY --api-secret SECRET --path PATH [options]

Signs a merchant API request (spec 5.1) and prints the Authorization header and a ready curl command.

Options:
  --api-key KEY           the merchant's API key (required)
  --api-secret-file FILE  read the merchant's API secret from FILE (else $SERVICE_API_SECRET)
  --api-secret SECRET     the same on the command line (visible in ps: a warning)
  --method METHOD         default GET, or POST when --body is given
  --path PATH             such as /v1/payments or /v1/payments/p_123 (required)
  --base-url URL          default http://127.0.0.1:4010
  --body JSON             the exact request body (signed byte for byte)
  --timestamp T           Unix seconds to sign with, default now
  --json                  print { headers, body, curl } as JSON
  -h, --help              show this help

Example:
  service-pay sign api --api-key ak_test --api-secret sk_test --path /v1/payments \\
    --body '{"orderNo":"o-1","tokenSymbol":"USDT","amount":"5","expireSec":900,"notifyUrl":"http://127.0.0.1:3000/wh"}'`;

const WEBHOOK_FLAGS = {
  secret: { type: 'string' },
  'secret-file': { type: 'string' },
  url: { type: 'string' },
  timestamp: { type: 'string' },
  'delivery-id': { type: 'string' },
  json: { type: 'boolean' },
  ...EVENT_FLAGS,
} as const;

const API_FLAGS = {
  'api-key': { type: 'string' },
  'api-secret': { type: 'string' },
  'api-secret-file': { type: 'string' },
  method: { type: 'string' },
  path: { type: 'string' },
  'base-url': { type: 'string' },
  body: { type: 'string' },
  timestamp: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export function signCommand(args: string[], io: Io): number {
  if (args[0] === 'api') return signApi(args.slice(1), io);
  if (args[0] === 'webhook') args = args.slice(1);
  const values = parse(args, WEBHOOK_FLAGS);
  if (values.help) {
    io.out(SIGN_HELP);
    return EXIT.OK;
  }
  const secret = readSecret(io, values.secret, values['secret-file'], WEBHOOK_SECRET);
  const timestamp = integerFlag(values.timestamp, 'timestamp');
  if (timestamp !== undefined && timestamp < 0) throw new UsageError('--timestamp must be Unix seconds >= 0');
  const deliveryId = values['delivery-id'];
  if (deliveryId !== undefined && !deliveryId.startsWith('dl_'))
    throw new UsageError('--delivery-id must start with "dl_"');
  const url = values.url ?? 'http://127.0.0.1:3000/webhooks/service';
  const body = eventBody(values);
  const { headers } = signWebhook({
    event: body,
    secret,
    ...(timestamp === undefined ? {} : { timestamp }),
    ...(deliveryId === undefined ? {} : { deliveryId }),
  });
  const display = {
    'Content-Type': headers['content-type'] as string,
    'X-Service-Event': headers['x-service-event'] as string,
    'X-Service-Signature': headers['x-service-signature'] as string,
    'X-Service-Delivery': headers['x-service-delivery'] as string,
  };
  print(io, values.json === true, display, body, curlCommand('POST', url, display, body));
  return EXIT.OK;
}

function signApi(args: string[], io: Io): number {
  const values = parse(args, API_FLAGS);
  if (values.help) {
    io.out(SIGN_API_HELP);
    return EXIT.OK;
  }
  const apiKey = requireFlag(values['api-key'], 'api-key', "the merchant's API key");
  const apiSecret = readSecret(io, values['api-secret'], values['api-secret-file'], API_SECRET);
  const path = requireFlag(values.path, 'path', 'such as /v1/payments');
  if (!path.startsWith('/')) throw new UsageError(`--path must start with "/", got ${JSON.stringify(path)}`);
  const baseUrl = withoutTrailingSlashes(values['base-url'] ?? 'http://127.0.0.1:4010');
  if (!/^https?:\/\//.test(baseUrl) || !URL.canParse(baseUrl))
    throw new UsageError(`--base-url must be an http:// or https:// URL`);
  const method = (values.method ?? (values.body === undefined ? 'GET' : 'POST')).toUpperCase();
  if (!/^[A-Z]{1,16}$/.test(method)) throw new UsageError(`--method must be an HTTP method such as GET or POST`);
  const timestamp = integerFlag(values.timestamp, 'timestamp');
  if (timestamp !== undefined && timestamp < 0) throw new UsageError('--timestamp must be Unix seconds >= 0');
  const basePath = withoutTrailingSlashes(new URL(baseUrl).pathname);
  let authorization: string;
  try {
    authorization = signApiRequest({
      method,
      path: `${basePath}${path}`,
      body: values.body,
      apiKey,
      apiSecret,
      timestamp,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const headers = { 'Content-Type': 'application/json', Authorization: authorization };
  print(io, values.json === true, headers, values.body, curlCommand(method, `${baseUrl}${path}`, headers, values.body));
  return EXIT.OK;
}

function print(io: Io, json: boolean, headers: Record<string, string>, body: string | undefined, curl: string): void {
  if (json) {
    io.out(JSON.stringify({ headers, body: body ?? null, curl }, null, 2));
    return;
  }
  for (const [name, value] of Object.entries(headers)) io.out(`${name}: ${value}`);
  if (body !== undefined) io.out(`\n${body}`);
  io.out(`\n${curl}`);
}
