import { readConfig, type ShopConfig, ShopError } from '@service-pay/example-shop-kit';
import { createLambdaHandler, type LambdaHttpResult } from '@service-pay/lambda';
import { type DynamoDbShop, openShop, type ShopOptions } from './shop.ts';
import { tablesFromEnv } from './tables.ts';

/** What the function reads of an API Gateway HTTP API (payload 2.0) event. */
export interface HttpApiEvent {
  version: '2.0';
  rawPath: string;
  requestContext: { http: { method: string; path?: string } };
  headers: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded: boolean;
}

const json = (statusCode: number, body: unknown): LambdaHttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
  isBase64Encoded: false,
});

/**
 * The shop's routes on one function: the webhook (`POST /webhooks/service`, through `createLambdaHandler`,
 * exactly once with a transactional `DynamoDbStore`), and the orders API.
 */
export function createShopFunction(shop: DynamoDbShop): (event: HttpApiEvent) => Promise<LambdaHttpResult> {
  const webhook = createLambdaHandler(shop.webhook);
  return async (event) => {
    const method = event.requestContext.http.method;
    const path = event.rawPath;
    try {
      if (method === 'POST' && path === '/webhooks/service') return await webhook(event);
      if (method === 'POST' && path === '/orders') {
        const text = event.isBase64Encoded
          ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
          : (event.body ?? '');
        // A body that is not JSON is an order with nothing in it: placeOrder answers it with a coded 400.
        let input: unknown = {};
        try {
          input = JSON.parse(text);
        } catch {}
        return json(201, await shop.placeOrder((input ?? {}) as object));
      }
      if (method === 'GET' && path === '/orders') return json(200, await shop.listOrders());
      const one = /^\/orders\/([^/]+)$/.exec(path);
      if (method === 'GET' && one !== null) {
        const order = await shop.getOrder(decodeURIComponent(one[1] as string));
        if (order === undefined) throw new ShopError(404, 'ORDER_NOT_FOUND', `No order ${one[1]}.`);
        return json(200, order);
      }
      return json(404, { error: 'NOT_FOUND', message: `No route ${method} ${path}.` });
    } catch (error) {
      if (error instanceof ShopError) return json(error.status, { error: error.code, message: error.message });
      console.error('[shop]', error);
      return json(500, { error: 'INTERNAL', message: 'Internal error.' });
    }
  };
}

let cold: ((event: HttpApiEvent) => Promise<LambdaHttpResult>) | undefined;

/** Opens the shop from the environment: the configuration the function is deployed with. */
export function shopFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Pick<ShopOptions, 'credit' | 'logger'> = {},
): DynamoDbShop {
  const config: ShopConfig = readConfig(env);
  if (!config.publicUrl) throw new Error('PUBLIC_URL must be the API Gateway URL the payment service posts to.');
  return openShop(config, {
    tables: tablesFromEnv(env),
    ...(env.DYNAMODB_ENDPOINT ? { dynamodbEndpoint: env.DYNAMODB_ENDPOINT } : {}),
    notifyUrl: `${config.publicUrl}/webhooks/service`,
    ...overrides,
  });
}

/** The Lambda entry point (`handler.handler`): the shop opens on the first event, once per container. */
export async function handler(event: HttpApiEvent): Promise<LambdaHttpResult> {
  cold ??= createShopFunction(shopFromEnv());
  return cold(event);
}
