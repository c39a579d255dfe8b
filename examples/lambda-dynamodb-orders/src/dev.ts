import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { serveLambdaLocally } from '@service-pay/lambda';
import { startDynamoDbLocal } from '@service-pay/test-kit/dynamodb';
import { handler } from './handler.ts';
import { createShopTables, tablesFromEnv } from './tables.ts';

// `pnpm dev`: the function on this machine as it runs on AWS. DynamoDB Local (AWS's emulator, on Java 17,
// fetched once into ~/.cache/service-pay) with the shop's tables, and the function's module served over HTTP
// as API Gateway's HTTP API serves it, so `service-pay listen --forward-to` and `trigger` reach it.
//
// Environment: SERVICE_API_URL, SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET (else the keys
// `service-pay listen` keeps in .service-pay/dev-secrets.json in this folder, and its default URL); PORT
// (default 3000, 0: a free one); DYNAMODB_ENDPOINT to use a DynamoDB Local already running instead of
// starting one (DYNAMODB_PORT: the started one's port, default a free one; DYNAMODB_DATA_DIR: keep its data
// there across runs, default in memory).
const env = process.env;
const KEYS = ['SERVICE_API_KEY', 'SERVICE_API_SECRET', 'SERVICE_WEBHOOK_SECRET'] as const;
if (KEYS.some((k) => !env[k])) {
  const file = '.service-pay/dev-secrets.json';
  let saved: { apiKey?: string; apiSecret?: string; webhookSecret?: string };
  try {
    saved = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.error(
      `Missing ${KEYS.filter((k) => !env[k]).join(', ')}, and no ${file} here. Start the simulator in this folder first, in another terminal:\n  npx service-pay listen --forward-to http://127.0.0.1:${env.PORT ?? 3000}/webhooks/service\nor set the variables it prints.`,
    );
    process.exit(2);
  }
  env.SERVICE_API_URL ??= 'http://127.0.0.1:4010';
  env.SERVICE_API_KEY ||= saved.apiKey;
  env.SERVICE_API_SECRET ||= saved.apiSecret;
  env.SERVICE_WEBHOOK_SECRET ||= saved.webhookSecret;
}

const emulator = !env.DYNAMODB_ENDPOINT
  ? await startDynamoDbLocal({
      ...(env.DYNAMODB_PORT ? { port: Number(env.DYNAMODB_PORT) } : {}),
      ...(env.DYNAMODB_DATA_DIR ? { dbPath: env.DYNAMODB_DATA_DIR } : {}),
    }).catch((error: Error) => {
      console.error(
        `DynamoDB Local did not start: ${error.message}\nOr set DYNAMODB_ENDPOINT to a DynamoDB Local already running (such as docker run -p 8000:8000 amazon/dynamodb-local).`,
      );
      process.exit(1);
    })
  : undefined;
const endpoint = env.DYNAMODB_ENDPOINT || (emulator?.endpoint as string);
env.DYNAMODB_ENDPOINT = endpoint;

// What a deployment's infrastructure code does once: the tables, before the first event.
const client = new DynamoDBClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
await createShopTables(client, tablesFromEnv(env));
client.destroy();

const server = await serveLambdaLocally(handler, { port: Number(env.PORT ?? 3000), functionName: 'shop' });
// The function reads PUBLIC_URL on its first event (the notifyUrl of the orders it places).
env.PUBLIC_URL ||= server.url;
// One JSON line first, so scripts (and the test) can read the addresses; then the same for a person.
console.log(
  JSON.stringify({
    listening: server.url,
    notifyUrl: `${env.PUBLIC_URL}/webhooks/service`,
    dynamodb: env.DYNAMODB_ENDPOINT,
  }),
);
console.log(
  [
    `The function (handler.handler) at ${server.url}, as API Gateway's HTTP API serves it; DynamoDB Local at ${endpoint}.`,
    `  place an order:  curl -X POST ${server.url}/orders -H 'content-type: application/json' -d '{"amount":"12.50","tokenSymbol":"USDT"}'`,
    `  list orders:     curl ${server.url}/orders`,
    `  webhooks:        npx service-pay listen --forward-to ${server.url}/webhooks/service`,
    'Press Ctrl+C to stop.',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server
      .close()
      .then(() => emulator?.stop())
      .then(() => process.exit(0));
  });
}
