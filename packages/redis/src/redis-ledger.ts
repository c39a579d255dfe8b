import {
  type AttemptSource,
  decodeLedgerCursor,
  encodeLedgerCursor,
  flaggedLedgerEntry,
  type LedgerCounts,
  type LedgerEntry,
  type LedgerFailure,
  type LedgerFlagReason,
  type LedgerPage,
  type LedgerPayment,
  type PaymentLedger,
  pageLimit,
} from '@service-pay/core';
import type { RedisCommands, StoreScript } from './clients/redis-commands.js';
import { textOrNull } from './clients/redis-commands.js';

/**
 * The ledger's scripts. KEYS[1] is the entries hash (payment id -> entry as JSON); ARGV[1] names the open
 * set (payment id scored by its last failure), a key with the same hash tag, so Redis Cluster keeps both
 * in one slot and a script reaches both. Each write is one script: one round trip.
 */
const SCRIPTS = {
  // ARGV: open key, payment id, the new entry's JSON (attempts 1), at, code, message, key. Replies attempts.
  servicePayLedgerRecord: `local v = redis.call('HGET', KEYS[1], ARGV[2])
local e
if v then
  e = cjson.decode(v)
  e.attempts = e.attempts + 1
  if e.firstFailedAt == 0 then e.firstFailedAt = tonumber(ARGV[4]) end
  e.lastFailedAt = tonumber(ARGV[4])
  e.lastError = { code = ARGV[5], message = ARGV[6] }
  e.key = ARGV[7]
  if e.state ~= 'flagged' then e.state = 'failing' end
  e.closedBy = nil
  e.closedAt = nil
else
  e = cjson.decode(ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(e))
redis.call('ZADD', ARGV[1], e.lastFailedAt, ARGV[2])
return e.attempts`,
  // ARGV: open key, payment id, closedBy, at. Replies 1 when an open (failing) entry was closed.
  servicePayLedgerClose: `local v = redis.call('HGET', KEYS[1], ARGV[2])
if not v then return 0 end
local e = cjson.decode(v)
if e.state ~= 'failing' then return 0 end
e.state = 'closed'
e.closedBy = ARGV[3]
e.closedAt = tonumber(ARGV[4])
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(e))
redis.call('ZREM', ARGV[1], ARGV[2])
return 1`,
  // ARGV: open key, payment id, the new entry's JSON (flagged), reason, at, code, message.
  servicePayLedgerFlag: `local v = redis.call('HGET', KEYS[1], ARGV[2])
local e
if v then
  e = cjson.decode(v)
  e.state = 'flagged'
  e.flag = ARGV[4]
  e.lastFailedAt = tonumber(ARGV[5])
  e.lastError = { code = ARGV[6], message = ARGV[7] }
else
  e = cjson.decode(ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(e))
redis.call('ZADD', ARGV[1], e.lastFailedAt, ARGV[2])
return 1`,
  // ARGV: open key, max score ('+inf' or the cursor's time), the cursor's payment id ('' for none), count.
  // Replies the entries' JSON, most recent failure first, ties by payment id descending.
  servicePayLedgerPage: `local want = tonumber(ARGV[4])
local out = {}
local offset = 0
while #out < want do
  local ids = redis.call('ZREVRANGEBYSCORE', ARGV[1], ARGV[2], '-inf', 'WITHSCORES', 'LIMIT', offset, want)
  if #ids == 0 then break end
  for i = 1, #ids, 2 do
    local id, score = ids[i], ids[i + 1]
    if ARGV[3] == '' or tostring(score) ~= ARGV[2] or id < ARGV[3] then
      if #out < want then out[#out + 1] = redis.call('HGET', KEYS[1], id) end
    end
  end
  offset = offset + want
end
return out`,
  // ARGV: open key. Replies {entries, open, flagged}.
  servicePayLedgerCounts: `local open = redis.call('ZRANGE', ARGV[1], 0, -1)
local flagged = 0
for i = 1, #open do
  local v = redis.call('HGET', KEYS[1], open[i])
  if v and cjson.decode(v).state == 'flagged' then flagged = flagged + 1 end
end
return {redis.call('HLEN', KEYS[1]), #open, flagged}`,
} as const;

const SCRIPT = Object.fromEntries(Object.entries(SCRIPTS).map(([name, lua]) => [name, { name, lua }])) as {
  [K in keyof typeof SCRIPTS]: StoreScript;
};

/**
 * `RedisDedupeStore`'s ledger: a hash of entries (payment id -> JSON) and a sorted set of the open ones by
 * their last failure, under `{<keyPrefix>ledger}:entries` and `:open` (one hash tag: one Cluster slot).
 * Each write is one script; a page is one script over the sorted set. Entries are kept until deleted (the
 * open set holds only failing and flagged ones).
 *
 * @example
 * ```ts
 * const page = await new RedisDedupeStore({ client }).ledger.failing({ limit: 20 });
 * ```
 */
export class RedisLedger implements PaymentLedger {
  readonly #entries: string;
  readonly #open: string;

  constructor(
    private readonly redis: RedisCommands,
    prefix: string,
  ) {
    this.#entries = `{${prefix}ledger}:entries`;
    this.#open = `{${prefix}ledger}:open`;
  }

  async recordFailure(f: LedgerFailure): Promise<number> {
    const entry: LedgerEntry = {
      paymentId: f.paymentId,
      orderNo: f.orderNo,
      amount: f.amount,
      tokenSymbol: f.tokenSymbol,
      key: f.key,
      state: 'failing',
      attempts: 1,
      firstFailedAt: f.at,
      lastFailedAt: f.at,
      lastError: { code: f.code, message: f.message },
    };
    const reply = await this.redis.script(SCRIPT.servicePayLedgerRecord, this.#entries, [
      this.#open,
      f.paymentId,
      JSON.stringify(entry),
      f.at,
      f.code,
      f.message,
      f.key,
    ]);
    return Number(reply);
  }

  async close(paymentId: string, closedBy: AttemptSource, at = Date.now()): Promise<boolean> {
    const reply = await this.redis.script(SCRIPT.servicePayLedgerClose, this.#entries, [
      this.#open,
      paymentId,
      closedBy,
      at,
    ]);
    return Number(reply) === 1;
  }

  async flag(
    paymentId: string,
    reason: LedgerFlagReason,
    d: Partial<LedgerPayment> & { message?: string; at?: number } = {},
  ): Promise<void> {
    const at = d.at ?? Date.now();
    const entry = flaggedLedgerEntry(paymentId, reason, d, at);
    const { code, message } = entry.lastError;
    await this.redis.script(SCRIPT.servicePayLedgerFlag, this.#entries, [
      this.#open,
      paymentId,
      JSON.stringify(entry),
      reason,
      at,
      code,
      message,
    ]);
  }

  async failing(options: { limit?: number; cursor?: string } = {}): Promise<LedgerPage> {
    const limit = pageLimit(options.limit);
    const cursor = options.cursor === undefined ? undefined : decodeLedgerCursor(options.cursor);
    const reply = await this.redis.script(SCRIPT.servicePayLedgerPage, this.#entries, [
      this.#open,
      cursor === undefined ? '+inf' : String(cursor.lastFailedAt),
      cursor === undefined ? '' : cursor.paymentId,
      limit + 1,
    ]);
    const all = (Array.isArray(reply) ? reply : []).map((v) => entryOf(textOrNull(v)));
    const entries = all.filter((e): e is LedgerEntry => e !== undefined).slice(0, limit);
    const last = entries[entries.length - 1];
    return all.length > limit && last !== undefined ? { entries, next: encodeLedgerCursor(last) } : { entries };
  }

  async story(paymentId: string): Promise<LedgerEntry | undefined> {
    const reply = await this.redis.script(STORY, this.#entries, [paymentId]);
    return entryOf(textOrNull(reply));
  }

  async counts(): Promise<LedgerCounts> {
    const reply = (await this.redis.script(SCRIPT.servicePayLedgerCounts, this.#entries, [this.#open])) as unknown[];
    const [all, open, flagged] = reply.map(Number) as [number, number, number];
    return { failing: open - flagged, flagged, closed: all - open };
  }
}

const STORY: StoreScript = { name: 'servicePayLedgerStory', lua: "return redis.call('HGET', KEYS[1], ARGV[1])" };

function entryOf(text: string | null): LedgerEntry | undefined {
  if (text === null) return undefined;
  const e = JSON.parse(text) as LedgerEntry;
  // cjson writes an empty table for a missing value; only what an entry has is kept.
  if (e.flag === undefined) delete e.flag;
  return e;
}
