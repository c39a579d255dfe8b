import { randomBytes } from 'node:crypto';

/** Payment identifiers start with `p_` (spec 2.2). */
export const newPaymentId = (): string => `p_${randomBytes(12).toString('hex')}`;
/** Delivery identifiers start with `dl_` (spec 6). */
export const newDeliveryId = (): string => `dl_${randomBytes(12).toString('hex')}`;
/** A transaction hash in the form TRON and EVM chains print (64 hex digits). */
export const newTxId = (): string => randomBytes(32).toString('hex');
/** The control API's per-run token: 24 random bytes, base64url (32 characters). */
export const newControlToken = (): string => randomBytes(24).toString('base64url');
