import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { asStoreWork } from '@service-pay/core/node';
import { DynamoDbStoreError } from './errors.js';
import { ATTR, TTL_ATTRIBUTE } from './record-item.js';

/** What the store sends its requests through: either client (a document client passes low-level commands on). */
export interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: each command has its own output type
  send(command: any): Promise<any>;
}

const errorName = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;

/** DynamoDB's answer when the table (or an index) is not there. */
export const isTableMissing = (error: unknown): boolean => errorName(error) === 'ResourceNotFoundException';

const ACTIVE_WAIT_MS = 120_000;

/**
 * Creates the table (partition key `pk`, on-demand billing) and turns TTL on (`ttl`), each only if missing:
 * idempotent, and safe when several processes run it at once. Waits until the table is `ACTIVE` (a few
 * seconds on AWS).
 */
export async function createTable(client: Sender, tableName: string): Promise<void> {
  try {
    await asStoreWork(() =>
      client.send(
        new CreateTableCommand({
          TableName: tableName,
          AttributeDefinitions: [{ AttributeName: ATTR.key, AttributeType: 'S' }],
          KeySchema: [{ AttributeName: ATTR.key, KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      ),
    );
  } catch (error) {
    if (errorName(error) !== 'ResourceInUseException') throw explainDenied(error, tableName, 'CreateTable');
  }
  await waitActive(client, tableName);
  const ttl = await asStoreWork(() => client.send(new DescribeTimeToLiveCommand({ TableName: tableName })));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  if (status === 'ENABLED' || status === 'ENABLING') return;
  try {
    await asStoreWork(() =>
      client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { Enabled: true, AttributeName: TTL_ATTRIBUTE },
        }),
      ),
    );
  } catch (error) {
    // Another process turned it on in between: DynamoDB says so with a ValidationException.
    const again = await asStoreWork(() => client.send(new DescribeTimeToLiveCommand({ TableName: tableName })));
    const now = again.TimeToLiveDescription?.TimeToLiveStatus;
    if (now !== 'ENABLED' && now !== 'ENABLING') throw explainDenied(error, tableName, 'UpdateTimeToLive');
  }
}

async function waitActive(client: Sender, tableName: string): Promise<void> {
  const started = Date.now();
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    const { Table } = await asStoreWork(() => client.send(new DescribeTableCommand({ TableName: tableName })));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() - started > ACTIVE_WAIT_MS) {
      throw new DynamoDbStoreError(
        'TABLE_MISSING',
        `table ${tableName} was not ACTIVE after ${ACTIVE_WAIT_MS / 1000} s.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function explainDenied(error: unknown, tableName: string, action: string): unknown {
  const name = errorName(error);
  if (name !== 'AccessDeniedException' && name !== 'UnrecognizedClientException') return error;
  return new DynamoDbStoreError(
    'TABLE_MISSING',
    `table ${tableName} is missing and could not be created: ${action} was denied (${name}). Create it once ` +
      `(partition key "${ATTR.key}" of type S, TTL on attribute "${TTL_ATTRIBUTE}"; the README shows how), or grant ` +
      `dynamodb:CreateTable, dynamodb:DescribeTable, dynamodb:DescribeTimeToLive and dynamodb:UpdateTimeToLive ` +
      'on it to the role that runs migrate().',
    { cause: error },
  );
}

/** The error for a missing table when the store may not create it. */
export function tableMissing(tableName: string, cause: unknown): DynamoDbStoreError {
  return new DynamoDbStoreError(
    'TABLE_MISSING',
    `table ${tableName} does not exist, and autoMigrate is off. Run store.migrate() once, or create it by hand ` +
      `(partition key "${ATTR.key}" of type S, on-demand billing, TTL on attribute "${TTL_ATTRIBUTE}").`,
    { cause },
  );
}
