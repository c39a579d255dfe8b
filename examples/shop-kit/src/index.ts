export { type BootedShop, bootShop } from './boot.js';
export { readConfig, type ShopConfig } from './config.js';
export { type CreditTally, creditOnPaymentPaid } from './credit-on-payment-paid.js';
export { type Database, openDatabase } from './database.js';
export { createDedupeStore } from './dedupe-store.js';
export { type Order, OrderBook } from './orders.js';
export { createShop, type PlacedOrder, type Shop, ShopError } from './shop.js';
