import {
  type BootedShop,
  bootShop,
  openShopResources,
  readConfig,
  type ShopConfig,
  type ShopResources,
} from '@service-pay/example-shop-kit';

/** This process's shop: made on first use, never at import (`next build` imports every route without the shop's environment). */
interface ShopProcess {
  config: ShopConfig;
  /** The database and the payment store, made synchronously: the webhook route needs the store before the shop has booted. */
  resources: ShopResources;
  booted?: Promise<BootedShop> | undefined;
}

// On globalThis, not in a module variable: every route is bundled with its own copy of this module, and
// `next dev` re-evaluates modules on each edit. A module variable would open one database per copy.
const KEY = Symbol.for('@service-pay/example-next-orders/shop');
const cache = globalThis as typeof globalThis & { [KEY]?: ShopProcess };

/** The configuration, the database and the payment store, read and made once per process. Throws when the environment is incomplete. */
export function shopProcess(): ShopProcess {
  let current = cache[KEY];
  if (current === undefined) {
    const config = readConfig(process.env);
    current = { config, resources: openShopResources(config) };
    cache[KEY] = current;
  }
  return current;
}

/**
 * The booted shop: order book, payment client, credit and reconcile loop, booted once per process. The loop
 * starts with it: it credits the orders whose webhooks never arrived (`SHOP_RECONCILE_EVERY_MS`, 0 = off).
 */
export function shop(): Promise<BootedShop> {
  const current = shopProcess();
  current.booted ??= bootShop(current.config, {
    notifyUrl: `${publicUrl(current.config)}/webhooks/service`,
    resources: current.resources,
  })
    .then((booted) => {
      if (current.config.reconcileEveryMs > 0) booted.startReconcileLoop({ everyMs: current.config.reconcileEveryMs });
      return booted;
    })
    .catch((error: unknown) => {
      // A database that was down at boot must not stay failed: the next request tries again.
      current.booted = undefined;
      throw error;
    });
  return current.booted;
}

/** Where the payment service reaches this shop. `next dev` guesses its own address; `next start` must be told. */
function publicUrl(config: ShopConfig): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  if (process.env.NODE_ENV === 'production') {
    throw new Error(
      'Set PUBLIC_URL to the address the payment service reaches this shop at (e.g. http://127.0.0.1:3000).',
    );
  }
  return `http://127.0.0.1:${process.env.PORT ?? 3000}`;
}
