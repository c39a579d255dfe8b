import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The store's item, one per dedupe key, in the table's own attribute names (short: every byte of every
 * item is billed):
 * - `pk` (S, the partition key): the dedupe key;
 * - `st` (S): `lease` while an attempt holds the key, `done` once it is recorded;
 * - `tok` (S): the token of the attempt that holds or recorded it (the fence);
 * - `fp` (S): the payment's fingerprint;
 * - `until` (N, ms since the epoch): when the lease or the record ends, read by the store's conditions
 *   (DynamoDB's TTL deletes late, up to days after);
 * - `ttl` (N, seconds since the epoch): the same instant for DynamoDB's TTL, which deletes the item some
 *   time after it;
 * - on records of the transactional kind: `outcome`, `paymentId`, `deliveryId`, `source`, `reason`, `at`.
 */
export const ATTR = { key: 'pk', state: 'st', token: 'tok', fingerprint: 'fp', until: 'until', ttl: 'ttl' } as const;

/** The TTL attribute DynamoDB is told about by `migrate()`. */
export const TTL_ATTRIBUTE = ATTR.ttl;

export type NativeItem = Record<string, string | number>;

/** A lease held by `token` until `until`. */
export function leaseItem(key: string, token: string, fingerprint: string, until: number): NativeItem {
  return { pk: key, st: 'lease', tok: token, fp: fingerprint, until, ttl: ttlOf(until) };
}

/** A completed record, kept until `until`; `extra` are the transactional kind's inbox fields. */
export function doneItem(
  key: string,
  token: string,
  fingerprint: string,
  until: number,
  extra: Record<string, string | number | undefined> = {},
): NativeItem {
  const item: NativeItem = { pk: key, st: 'done', tok: token, fp: fingerprint, until };
  // An infinite retention keeps the record: no TTL attribute, so DynamoDB never deletes it.
  if (Number.isFinite(until)) item.ttl = ttlOf(until);
  else item.until = Number.MAX_SAFE_INTEGER;
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) item[name] = value;
  return item;
}

function ttlOf(until: number): number {
  return Math.ceil(until / 1000);
}

/** The store's own items in DynamoDB's wire form: only strings and numbers. */
export function toAttributes(item: NativeItem): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(item))
    out[name] = typeof value === 'number' ? { N: String(value) } : { S: value };
  return out;
}

/** What the store reads back of an item (from `ReturnValues` or a failed condition). */
export interface StoredItem {
  state: string | undefined;
  token: string | undefined;
  fingerprint: string | undefined;
  until: number;
}

export function readItem(item: Record<string, AttributeValue> | undefined): StoredItem | undefined {
  if (item === undefined || item[ATTR.key] === undefined) return undefined;
  const until = Number(item[ATTR.until]?.N);
  return {
    state: item[ATTR.state]?.S,
    token: item[ATTR.token]?.S,
    fingerprint: item[ATTR.fingerprint]?.S,
    until: Number.isFinite(until) ? until : 0,
  };
}

/** Names and values shared by the store's conditions. */
export const NAMES = { '#st': ATTR.state, '#tok': ATTR.token, '#until': ATTR.until } as const;

/** Free, or its lease or record has ended. */
export const CLAIMABLE = 'attribute_not_exists(pk) OR #until <= :now';
/** `token` holds the lease and it has not run out. */
export const HELD_BY_TOKEN = '#st = :lease AND #tok = :tok AND #until > :now';
/** `token` holds the lease, run out or not: nobody else has claimed or recorded the key since. */
export const STILL_OURS = '#st = :lease AND #tok = :tok';
