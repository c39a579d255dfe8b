export {
  type NodeBodySource,
  type NodeRequestLike,
  type ReadNodeBodyOptions,
  readNodeBody,
  type ToWebhookRequestOptions,
  toWebhookRequest,
} from './read-node-body.js';
