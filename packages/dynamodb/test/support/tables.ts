import { CreateTableCommand, type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';

/** A table of the test's own with a partition key `pk` and a sort key `sk` (both S), on-demand. */
export async function createPkSkTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
}

/** How many items `pk` has, read consistently. */
export async function countItems(client: DynamoDBClient, tableName: string, pk: string): Promise<number> {
  let count = 0;
  let start: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start !== undefined);
  return count;
}
