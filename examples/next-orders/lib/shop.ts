import {
  type BootedShop,
  bootShop,
  type DedupeStoreHandle,
  openShopDedupeStore,
  readConfig,
  type ShopConfig,
} from '@service-pay/example-shop-kit';

/** This process's shop: made on first use, never at import (`next build` imports every route without the shop's environment). */
interface ShopProcess {
  config: ShopConfig;
  /** Made synchronously: the webhook route's options need it before the shop has booted. */
  dedupe: DedupeStoreHandle;
  booted?: Promise<BootedShop> | undefined;
}

// On globalThis, not in a module variable: every route is bundled with its own copy of this module, and
// `next dev` re-evaluates modules on each edit. A module variable would open one database per copy.
const KEY = Symbol.for('@service-pay/example-next-orders/shop');
const cache = globalThis as typeof globalThis & { [KEY]?: ShopProcess };

/** The configuration and the dedupe store, read and made once per process. Throws when the environment is incomplete. */
export function shopProcess(): ShopProcess {
  let current = cache[KEY];
  if (current === undefined) {
    const config = readConfig(process.env);
    current = { config, dedupe: openShopDedupeStore(config) };
    cache[KEY] = current;
  }
  return current;
}

/** The booted shop: database, order book, payment client and credit, booted once per process. */
export function shop(): Promise<BootedShop> {
  const current = shopProcess();
  current.booted ??= bootShop(current.config, {
    notifyUrl: `${publicUrl(current.config)}/webhooks/service`,
    dedupe: current.dedupe,
  }).catch((error: unknown) => {
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
