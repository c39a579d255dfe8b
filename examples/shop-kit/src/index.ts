export { type BootedShop, bootShop, openShopResources, type ShopResources } from './boot.ts';
export { readConfig, type ShopConfig, simulatorShopConfig } from './config.ts';
export {
  type CreditContext,
  type CreditPayment,
  type CreditTally,
  creditOnPaymentPaid,
} from './credit-on-payment-paid.ts';
export { type Database, type DatabaseConnection, openDatabase, type Queryable } from './database.ts';
export { type CreditGuard, type CreditInput, type Order, OrderBook } from './orders.ts';
export { openPaymentStore, type PaymentStoreHandle, type ShopStore } from './payment-store.ts';
export {
  printReconcileReport,
  type ReconcileLoop,
  type ReconcileLoopOptions,
  startReconcileLoop,
} from './reconcile-loop.ts';
export { type ReconcilePass, type ReconcilePassOptions, reconcilePendingOrders } from './reconcile-pending.ts';
export {
  createShop,
  type NotifyUrl,
  type PlacedOrder,
  paymentRequestFor,
  requestPayment,
  type Shop,
  ShopError,
} from './shop.ts';
export { type ShopTelemetry, shopTelemetry } from './telemetry.ts';
