/** Everything an example shop reads from its environment. */
export interface ShopConfig {
  port: number;
  /** Where the payment service reaches this shop; the webhook URL is built from it. */
  publicUrl: string | undefined;
  serviceUrl: string;
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  /**
   * Set: the Redis lease store, shared by every instance, with the unique paymentId as the database guard.
   * Unset: `PostgresStore` in the shop's database, the credit and the dedupe record in one transaction.
   */
  redisUrl: string | undefined;
  /** Set: PostgreSQL, shared by every instance. Unset: an embedded PGlite. */
  databaseUrl: string | undefined;
  /** Table name prefix, so several runs can share one PostgreSQL database. */
  tablePrefix: string;
  /** Chaos testing only: share of handler calls that fail transiently. */
  failureRate: number;
  /** How often the reconcile loop reads back the orders still pending after a minute; 0 turns it off. */
  reconcileEveryMs: number;
}

/** Reads the configuration, naming every missing variable at once. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ShopConfig {
  const missing = ['SERVICE_API_URL', 'SERVICE_API_KEY', 'SERVICE_API_SECRET', 'SERVICE_WEBHOOK_SECRET'].filter(
    (k) => !env[k],
  );
  if (missing.length > 0) {
    throw new Error(
      `Missing environment variables: ${missing.join(', ')}. Start the simulator (pnpm service-pay simulate, at the repository root) to get them.`,
    );
  }
  const failureRate = Number(env.SHOP_CHAOS_FAILURE_RATE ?? 0);
  if (!(failureRate >= 0 && failureRate < 1))
    throw new Error('SHOP_CHAOS_FAILURE_RATE must be a number from 0 to below 1.');
  const reconcileEveryMs = Number(env.SHOP_RECONCILE_EVERY_MS ?? 60_000);
  if (!(Number.isSafeInteger(reconcileEveryMs) && reconcileEveryMs >= 0))
    throw new Error('SHOP_RECONCILE_EVERY_MS must be a whole number of milliseconds (0 turns the loop off).');
  return {
    port: Number(env.PORT ?? 3000),
    publicUrl: env.PUBLIC_URL,
    serviceUrl: env.SERVICE_API_URL as string,
    apiKey: env.SERVICE_API_KEY as string,
    apiSecret: env.SERVICE_API_SECRET as string,
    webhookSecret: env.SERVICE_WEBHOOK_SECRET as string,
    redisUrl: env.REDIS_URL || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    tablePrefix: env.SHOP_TABLE_PREFIX ?? '',
    failureRate,
    reconcileEveryMs,
  };
}

/**
 * The configuration of a shop talking to a simulator merchant, as the demo and the tests start one in
 * process: embedded database, `PostgresStore` and no reconcile loop unless overridden.
 */
export function simulatorShopConfig(
  serviceUrl: string,
  merchant: { apiKey: string; apiSecret: string; webhookSecret: string },
  overrides: Partial<ShopConfig> = {},
): ShopConfig {
  return {
    port: 0,
    publicUrl: undefined,
    serviceUrl,
    apiKey: merchant.apiKey,
    apiSecret: merchant.apiSecret,
    webhookSecret: merchant.webhookSecret,
    redisUrl: undefined,
    databaseUrl: undefined,
    tablePrefix: '',
    failureRate: 0,
    reconcileEveryMs: 0,
    ...overrides,
  };
}
