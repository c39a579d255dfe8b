import { randomUUID } from 'node:crypto';
import { dedupeStoreConformance, transactionalStoreConformance } from '@service-pay/core/testing';
import { type DocumentWrites, DynamoDbStore, type DynamoDbTransaction } from '@service-pay/dynamodb';
import { beforeAll, describe, inject, it } from 'vitest';
import { emulatorClient, emulatorDocumentClient, uniqueTable } from './support/clients.js';
import { countItems, createPkSkTable } from './support/tables.js';

const endpoint = inject('dynamodbEndpoint');
const client = emulatorClient(endpoint);
const documentClient = emulatorDocumentClient(endpoint);
const leaseTable = uniqueTable('conf_lease');
const txTable = uniqueTable('conf_tx');
const marks = uniqueTable('conf_marks');

beforeAll(async () => {
  await new DynamoDbStore({ client, tableName: leaseTable }).migrate();
  await new DynamoDbStore({ client, tableName: txTable, transactional: true }).migrate();
  await createPkSkTable(client, marks);
});

describe('DynamoDbStore (lease) on DynamoDB Local: dedupeStoreConformance', () => {
  for (const c of dedupeStoreConformance(() => new DynamoDbStore({ client, tableName: leaseTable }))) it(c.name, c.run);
});

describe('DynamoDbStore (lease, document client): dedupeStoreConformance', () => {
  for (const c of dedupeStoreConformance(() => new DynamoDbStore({ documentClient, tableName: leaseTable }))) {
    it(c.name, c.run);
  }
});

describe('DynamoDbStore (transactional) on DynamoDB Local: transactionalStoreConformance', () => {
  const writes = {
    write: async (tx: DynamoDbTransaction, marker: string) => {
      tx.put({ TableName: marks, Item: { pk: { S: marker }, sk: { S: randomUUID() } } });
    },
    count: (marker: string) => countItems(client, marks, marker),
  };
  for (const c of transactionalStoreConformance(
    () => new DynamoDbStore({ client, tableName: txTable, transactional: true }),
    writes,
  )) {
    it(c.name, c.run);
  }
});

describe('DynamoDbStore (transactional, document client): transactionalStoreConformance', () => {
  const writes = {
    write: async (tx: DynamoDbTransaction<DocumentWrites>, marker: string) => {
      tx.put({ TableName: marks, Item: { pk: marker, sk: randomUUID() } });
    },
    count: (marker: string) => countItems(client, marks, marker),
  };
  for (const c of transactionalStoreConformance(
    () => new DynamoDbStore({ documentClient, tableName: txTable, transactional: true }),
    writes,
  )) {
    it(c.name, c.run);
  }
});
