const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** The table's default name. */
export const DEFAULT_TABLE_NAME = 'service_pay_inbox';

/** Checks a DynamoDB table name (3 to 255 of letters, digits, `_`, `-`, `.`); a `TypeError` says what is wrong. */
export function checkTableName(value: unknown = DEFAULT_TABLE_NAME): string {
  if (typeof value !== 'string' || !TABLE_NAME.test(value)) {
    throw new TypeError(
      `DynamoDbStore: tableName must be 3 to 255 letters, digits, "_", "-" or "." (DynamoDB's rule), got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}
