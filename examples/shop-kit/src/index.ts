export { type BootedShop, bootShop, openShopDedupeStore } from './boot.ts';
export { readConfig, type ShopConfig, simulatorShopConfig } from './config.ts';
export { type CreditTally, creditOnPaymentPaid } from './credit-on-payment-paid.ts';
export { type Database, openDatabase } from './database.ts';
export { createDedupeStore, type DedupeStoreHandle } from './dedupe-store.ts';
export { type Order, OrderBook } from './orders.ts';
export { createShop, type PlacedOrder, type Shop, ShopError } from './shop.ts';
export { type ShopTelemetry, shopTelemetry } from './telemetry.ts';
