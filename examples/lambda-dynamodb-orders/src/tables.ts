import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '@service-pay/dynamodb';

/** The shop's tables: names from the environment, so several shops (and test runs) share one DynamoDB. */
export interface ShopTables {
  /** Orders: partition key `id`. */
  orders: string;
  /** Credits: partition key `orderId`, sort key `creditId`; an item per credit, no condition of its own. */
  credits: string;
  /** The store's table (`DynamoDbStore`): partition key `pk`, TTL on `ttl`. */
  inbox: string;
}

export function tablesFromEnv(env: NodeJS.ProcessEnv = process.env): ShopTables {
  const prefix = env.SHOP_TABLE_PREFIX ?? 'shop';
  return { orders: `${prefix}_orders`, credits: `${prefix}_credits`, inbox: `${prefix}_payments_inbox` };
}

/**
 * Creates the shop's tables if missing: what infrastructure code (CDK, Terraform, SAM) does in a
 * deployment; here for the local runs. The store's table too (`migrate()`), though the store would create
 * it on first use: the orders API reads it before any payment arrives.
 */
export async function createShopTables(client: DynamoDBClient, tables: ShopTables): Promise<void> {
  const create = async (TableName: string, keys: Array<[string, 'HASH' | 'RANGE']>) => {
    try {
      await client.send(
        new CreateTableCommand({
          TableName,
          AttributeDefinitions: keys.map(([AttributeName]) => ({ AttributeName, AttributeType: 'S' })),
          KeySchema: keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType })),
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'ResourceInUseException') throw error;
    }
  };
  await create(tables.orders, [['id', 'HASH']]);
  await create(tables.credits, [
    ['orderId', 'HASH'],
    ['creditId', 'RANGE'],
  ]);
  await new DynamoDbStore({ client, tableName: tables.inbox }).migrate();
}
