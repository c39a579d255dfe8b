import { startDynamoDbLocal } from '@service-pay/test-kit/dynamodb';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** One DynamoDB Local for the whole run (in memory); the fault rows start their own. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', emulator.endpoint);
  return () => emulator.stop();
}
