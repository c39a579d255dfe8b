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
  WriteOutsideTransactionError,
} from './errors.js';
export {
  type DocumentWrites,
  type DynamoDbTransaction,
  type LowLevelWrites,
  TRANSACT_WRITE_LIMIT,
} from './transaction.js';
