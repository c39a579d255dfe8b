import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The notice is once per process: each case loads the store's module afresh. Making a store sends nothing.
async function freshStore() {
  vi.resetModules();
  const { DynamoDbStore } = await import('../src/index.js');
  return DynamoDbStore;
}
const client = () =>
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('DynamoDbStore says at construction, in development, when it is a lease store', () => {
  it('once per process for the lease mode, naming the idempotent credit and transactional: true', async () => {
    vi.stubEnv('NODE_ENV', 'development');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const DynamoDbStore = await freshStore();
    new DynamoDbStore({ client: client() });
    new DynamoDbStore({ client: client(), transactional: false, tableName: 'other' });
    expect(info).toHaveBeenCalledTimes(1);
    const line = String(info.mock.calls[0]?.[0]);
    expect(line).toContain('DynamoDbStore is a lease store');
    expect(line).toContain('idempotent');
    expect(line).toContain('transactional: true');
  });

  it('not for the transactional mode', async () => {
    vi.stubEnv('NODE_ENV', 'development');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const DynamoDbStore = await freshStore();
    new DynamoDbStore({ client: client(), transactional: true });
    expect(info).not.toHaveBeenCalled();
  });

  it('never under NODE_ENV=production', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const DynamoDbStore = await freshStore();
    new DynamoDbStore({ client: client() });
    expect(info).not.toHaveBeenCalled();
  });
});
