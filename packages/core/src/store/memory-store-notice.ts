import { safeLog, type WebhookLogger } from '../observe/logger.js';

let told = false;

/**
 * Says once per process, when the first `MemoryDedupeStore` is made, what it is for: one process, in
 * development. Its records die with the process and no other instance sees them, so a redelivery after a
 * restart, or to another instance, credits again. Under `NODE_ENV=production` it is an error on the store's
 * logger; otherwise a line on the console (the default logger shows no info, and a notice is not a
 * warning about a delivery).
 */
export function noteMemoryStore(logger: WebhookLogger): void {
  if (told) return;
  told = true;
  const fix =
    'Use a transactional store (PostgresStore, MySqlStore, SqliteStore: the record commits with the credit) or RedisDedupeStore with an idempotent credit.';
  if (globalThis.process?.env?.NODE_ENV === 'production') {
    safeLog(
      logger,
      'error',
      { code: 'MEMORY_STORE_IN_PRODUCTION' },
      `NODE_ENV=production and the webhook's dedupe records are in this process's memory (MemoryDedupeStore, the default when no store is given): a restart forgets them and another instance never sees them, so a redelivery credits again. ${fix}`,
    );
  } else {
    console.info(
      `[service-pay] MemoryDedupeStore (the default when no store is given): for one process, in development; a restart forgets what it handled. ${fix}`,
    );
  }
}
