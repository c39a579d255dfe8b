import { randomBytes } from 'node:crypto';
import { toRawAmount } from '@service-pay/core';
import { integerFlag } from './args.js';
import { UsageError } from './usage-error.js';

/** The flags `send` and `sign` share to describe the event they sign. */
export const EVENT_FLAGS = {
  'payment-id': { type: 'string' },
  'order-no': { type: 'string' },
  amount: { type: 'string' },
  token: { type: 'string' },
  network: { type: 'string' },
  decimals: { type: 'string' },
  body: { type: 'string' },
} as const;

export const EVENT_HELP = `Event (a valid payment.paid is built from these unless --body is given):
  --payment-id ID         default: a fresh p_ id
  --order-no NO           default: a fresh order_ number
  --amount AMOUNT         decimal string, default 12.50
  --token SYMBOL          default USDT
  --network NAME          default TRON
  --decimals N            token decimals for amountRaw, default 6
  --body JSON             sign and send this exact body instead`;

/** The body to sign: `--body` verbatim, or a spec 2.3 event built from the flags. */
export function eventBody(values: Partial<Record<keyof typeof EVENT_FLAGS, string>>): string {
  if (values.body !== undefined) {
    const conflicting = (['payment-id', 'order-no', 'amount', 'token', 'network', 'decimals'] as const).filter(
      (k) => values[k] !== undefined,
    );
    if (conflicting.length > 0) throw new UsageError(`--body cannot be combined with --${conflicting.join(', --')}`);
    return values.body;
  }
  const id = randomBytes(12).toString('hex');
  const paymentId = values['payment-id'] ?? `p_${id}`;
  if (!paymentId.startsWith('p_'))
    throw new UsageError(`--payment-id must start with "p_", got ${JSON.stringify(paymentId)}`);
  const amount = values.amount ?? '12.50';
  const decimals = integerFlag(values.decimals, 'decimals') ?? 6;
  let amountRaw: string;
  try {
    amountRaw = toRawAmount(amount, decimals);
  } catch (error) {
    throw new UsageError(`--amount: ${(error as Error).message}`);
  }
  return JSON.stringify({
    event: 'payment.paid',
    paymentId,
    orderNo: values['order-no'] ?? `order_${id.slice(0, 12)}`,
    txId: randomBytes(32).toString('hex'),
    tokenSymbol: values.token ?? 'USDT',
    paymentNetwork: values.network ?? 'TRON',
    amount,
    amountRaw,
    blockNum: String(61_000_000 + Math.floor(Math.random() * 1_000_000)),
    confirmations: 20,
    paidAt: new Date().toISOString(),
  });
}
