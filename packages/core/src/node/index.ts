export { bodyTimeout, bodyTooLarge } from '../http/body-limit.js';
export { clientDisconnected } from '../http/client-disconnected.js';
// Node only (AsyncLocalStorage): the web bundle must not import node:async_hooks.
export {
  asStoreWork,
  DeliveryScope,
  LateTxUseError,
  openDelivery,
  refusedValue,
} from '../store/delivery-scope.js';
export {
  ClientGuard,
  clientGuard,
  OwnTransactionError,
  refuseOwnTransactions,
  WriteOutsideTransactionError,
  wrapMethod,
} from '../store/own-transaction-guard.js';
export { ledgerPageListener } from './ledger-page-listener.js';
export {
  type NodeBodySource,
  type NodeRequestLike,
  type ReadNodeBodyOptions,
  readNodeBody,
  type ToWebhookRequestOptions,
  toWebhookRequest,
} from './read-node-body.js';
