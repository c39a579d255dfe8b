export { bodyTimeout, bodyTooLarge } from '../http/body-limit.js';
export { clientDisconnected } from '../http/client-disconnected.js';
export {
  type NodeBodySource,
  type NodeRequestLike,
  type ReadNodeBodyOptions,
  readNodeBody,
  type ToWebhookRequestOptions,
  toWebhookRequest,
} from './read-node-body.js';
