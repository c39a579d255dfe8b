import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { createServiceClient } from '@service-pay/client';
import { createReconciler, type PaidPayment, type WebhookLogger } from '@service-pay/core';
import { DynamoDbStore } from '@service-pay/dynamodb';
import {
  type Order,
  paymentRequestFor,
  type ReconcilePassOptions,
  requestPayment,
  type ShopConfig,
} from '@service-pay/example-shop-kit';
import { type CreditContext, creditOrder } from './credit.ts';
import type { ShopTables } from './tables.ts';

const DAY_MS = 24 * 3600 * 1000;

/**
 * An order as the shop's API answers it: the shop kit's order without `creditedBy`. `REJECTED`: the store
 * recorded the payment as rejected (wrong amount or token); a person looks at it.
 */
export type OrderView = Omit<Order, 'creditedBy'>;

/** What the shop's parts share: the tables and the document client. */
export interface ShopDeps {
  tables: ShopTables;
  documentClient: DynamoDBDocumentClient;
}

export interface ShopOptions {
  tables: ShopTables;
  /** DynamoDB Local's URL for local runs; unset on AWS. */
  dynamodbEndpoint?: string;
  /** Where the payment service sends webhooks for the orders placed. */
  notifyUrl: string | (() => string);
  /** Makes the shop's credit in place of `creditOrder` (the tests wrap it). */
  credit?: (deps: ShopDeps) => (payment: PaidPayment, ctx: CreditContext) => Promise<void>;
  logger?: WebhookLogger;
}

/**
 * The shop, wired: orders and credits in DynamoDB, `DynamoDbStore` (transactional) on the same document
 * client, the payment service's client, and one credit for webhooks and reconciliation alike.
 */
export function openShop(config: ShopConfig, options: ShopOptions) {
  const client = new DynamoDBClient(
    options.dynamodbEndpoint === undefined
      ? {}
      : {
          endpoint: options.dynamodbEndpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        },
  );
  const documentClient = DynamoDBDocumentClient.from(client);
  const deps: ShopDeps = { tables: options.tables, documentClient };
  const store = new DynamoDbStore({ documentClient, tableName: options.tables.inbox, transactional: true });
  const service = createServiceClient({
    baseUrl: config.serviceUrl,
    apiKey: config.apiKey,
    apiSecret: config.apiSecret,
  });
  const onPaymentPaid = (options.credit ?? creditOrder)(deps);
  const logging = options.logger ? { logger: options.logger } : {};
  const webhook = { secret: config.webhookSecret, store, onPaymentPaid, ...logging };
  const reconciler = createReconciler({ getPayment: service.getPayment, store, onPaymentPaid, ...logging });
  const { orders, credits, inbox } = options.tables;

  async function view(order: Record<string, unknown>): Promise<OrderView> {
    const paymentId = (order.paymentId as string | undefined) ?? null;
    const [{ Count }, record] = await Promise.all([
      documentClient.send(
        new QueryCommand({
          TableName: credits,
          KeyConditionExpression: 'orderId = :id',
          ExpressionAttributeValues: { ':id': order.id },
          Select: 'COUNT',
          ConsistentRead: true,
        }),
      ),
      paymentId === null
        ? undefined
        : documentClient.send(
            new GetCommand({ TableName: inbox, Key: { pk: `payment.paid:${paymentId}` }, ConsistentRead: true }),
          ),
    ]);
    const rejected = order.status === 'PENDING' && record?.Item?.outcome === 'rejected';
    return {
      id: order.id as string,
      amount: order.amount as string,
      tokenSymbol: order.tokenSymbol as string,
      status: rejected ? 'REJECTED' : (order.status as OrderView['status']),
      paymentId,
      credits: Count ?? 0,
    };
  }

  return {
    webhook,
    store,
    client,

    /** Records the order, then asks the service for its payment; 400 for bad input, 502 if the service refuses. */
    async placeOrder(input: { amount?: unknown; tokenSymbol?: unknown }) {
      const request = paymentRequestFor(input, options.notifyUrl);
      const id = request.orderNo;
      await documentClient.send(
        new PutCommand({
          TableName: orders,
          Item: {
            id,
            amount: request.amount,
            tokenSymbol: request.tokenSymbol,
            status: 'PENDING',
            createdAt: Date.now(),
          },
        }),
      );
      const paymentId = await requestPayment(service, request);
      await documentClient.send(
        new UpdateCommand({
          TableName: orders,
          Key: { id },
          UpdateExpression: 'SET paymentId = :p',
          ExpressionAttributeValues: { ':p': paymentId },
        }),
      );
      return { order: { id, amount: request.amount, tokenSymbol: request.tokenSymbol }, paymentId };
    },

    async getOrder(id: string): Promise<OrderView | undefined> {
      const { Item } = await documentClient.send(
        new GetCommand({ TableName: orders, Key: { id }, ConsistentRead: true }),
      );
      return Item === undefined ? undefined : view(Item);
    },

    async listOrders(): Promise<OrderView[]> {
      const { Items = [] } = await documentClient.send(new ScanCommand({ TableName: orders, ConsistentRead: true }));
      const sorted = Items.sort((a, b) => (a.createdAt as number) - (b.createdAt as number));
      return Promise.all(sorted.map(view));
    },

    /**
     * Reads back the payments of orders pending for `olderThanMs` (default a minute, and not older than
     * `notOlderThanMs`, default a day) and credits, once, those the service says are PAID: the same store
     * and credit as the webhook, so a webhook that lands meanwhile is a duplicate. A Scan: for a small
     * shop; a larger one keeps a GSI on status.
     */
    async reconcilePending(pass: ReconcilePassOptions = {}) {
      const now = Date.now();
      const { Items = [] } = await documentClient.send(
        new ScanCommand({
          TableName: orders,
          ConsistentRead: true,
          FilterExpression:
            '#status = :pending AND attribute_exists(paymentId) AND createdAt <= :old AND createdAt > :oldest',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'PENDING',
            ':old': now - (pass.olderThanMs ?? 60_000),
            ':oldest': now - (pass.notOlderThanMs ?? DAY_MS),
          },
        }),
      );
      const paymentIds = Items.sort((a, b) => (a.createdAt as number) - (b.createdAt as number))
        .slice(0, pass.limit ?? 500)
        .map((item) => item.paymentId as string);
      return reconciler.reconcileMany(paymentIds, { concurrency: pass.concurrency ?? 4 });
    },

    close: () => client.destroy(),
  };
}

export type DynamoDbShop = ReturnType<typeof openShop>;
