export {
  type NodeBodySource,
  type NodeRequestLike,
  type ReadNodeBodyOptions,
  readNodeBody,
  toWebhookRequest,
} from './read-node-body.js';
