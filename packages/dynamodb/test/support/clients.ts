import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A client of the emulator: any region and credentials do; no retries, so a fault shows at once. */
export function emulatorClient(endpoint: string, config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    ...config,
  });
}

export function emulatorDocumentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(emulatorClient(endpoint));
}

/** A table name of the test's own (3 or more characters, unique per call). */
export function uniqueTable(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
