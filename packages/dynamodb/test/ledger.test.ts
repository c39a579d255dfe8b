import { ledgerConformance } from '@service-pay/core/testing';
import { DynamoDbStore } from '@service-pay/dynamodb';
import { beforeAll, describe, inject, it } from 'vitest';
import { emulatorClient, uniqueTable } from './support/clients.js';

const endpoint = inject('dynamodbEndpoint');
const client = emulatorClient(endpoint);

describe('the ledger on DynamoDbStore (lease store)', () => {
  const tableName = uniqueTable('ledger_lease');
  beforeAll(() => new DynamoDbStore({ client, tableName }).migrate());
  for (const c of ledgerConformance({ make: async () => ({ store: new DynamoDbStore({ client, tableName }) }) })) {
    it(c.name, c.run);
  }
});

describe('the ledger on DynamoDbStore (transactional)', () => {
  const tableName = uniqueTable('ledger_tx');
  beforeAll(() => new DynamoDbStore({ client, tableName, transactional: true }).migrate());
  const cases = ledgerConformance({
    make: async () => ({ store: new DynamoDbStore({ client, tableName, transactional: true }) }),
  });
  for (const c of cases) it(c.name, c.run);
});
