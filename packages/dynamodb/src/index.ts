/** Core's class, re-exported: `instanceof` works whichever package it is imported from. */
export { LateTxUseError, WriteOutsideTransactionError } from '@service-pay/core/node';
export {
  type DynamoDbClientOption,
  type DynamoDbLeaseStore,
  type DynamoDbLeaseStoreOptions,
  DynamoDbStore,
  type DynamoDbStoreCommonOptions,
  type DynamoDbStoreConstructor,
  type DynamoDbTransactionalStore,
  type DynamoDbTransactionalStoreOptions,
} from './dynamodb-store.js';
export {
  type CancellationReason,
  DynamoDbStoreError,
  type DynamoDbStoreErrorCode,
} from './errors.js';
export {
  type DocumentWrites,
  type DynamoDbTransaction,
  type LowLevelWrites,
  TRANSACT_WRITE_LIMIT,
} from './transaction.js';
