import type { CreatePaymentInput, Payment } from '@service-pay/client';
import { SimulatorError } from './errors.js';
import { newPaymentId } from './ids.js';
import type { ResolvedMerchant } from './options.js';

/**
 * A payment as the simulator returns it: the spec's fields (2.2) plus what a developer needs to see the
 * simulated chain at work. The spec does not show the real representation; these extras are ours.
 *
 * @example
 * ```ts
 * const payment: SimulatedPayment = await sim.pay(paymentId).then((r) => r.payment);
 * console.log(payment.status, payment.confirmations, payment.requiredConfirmations);
 * ```
 */
export interface SimulatedPayment extends Payment {
  status: 'PENDING' | 'PAID' | 'EXPIRED';
  /** ISO 8601 UTC. */
  createdAt: string;
  /** `createdAt + expireSec`; a PENDING payment becomes EXPIRED then. */
  expiresAt: string;
  /** The merchant's threshold. */
  requiredConfirmations: number;
  /** Confirmations so far; 0 before payment; null when paid without an on-chain record. */
  confirmations: number | null;
  txId: string | null;
  paymentNetwork: string | null;
  /** The amount actually paid (it may differ from `amount` when a test underpays). */
  paidAmount: string | null;
  amountRaw: string | null;
  blockNum: string | null;
  paidAt: string | null;
}

export type Phase = 'pending' | 'confirming' | 'paid' | 'expired';

export interface PaymentRecord {
  paymentId: string;
  merchant: ResolvedMerchant;
  input: CreatePaymentInput;
  createdAtMs: number;
  phase: Phase;
  confirmations: number | null;
  txId: string | null;
  paymentNetwork: string | null;
  paidAmount: string | null;
  amountRaw: string | null;
  blockNum: string | null;
  paidAt: string | null;
  /** The exact webhook body, fixed when the payment became PAID; redeliveries send it again. */
  webhookBody: string | null;
}

/** Payments in memory, with the per-merchant order number index that refuses duplicates. */
export class PaymentStore {
  private readonly byId = new Map<string, PaymentRecord>();
  private readonly byOrder = new Map<string, string>();

  /** Payments dropped (oldest first) to stay within `retain.payments`. */
  dropped = 0;

  constructor(
    private readonly now: () => number,
    private readonly retain = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  create(merchant: ResolvedMerchant, input: CreatePaymentInput): PaymentRecord {
    const orderKey = this.freeOrderKey(merchant, input.orderNo);
    const record: PaymentRecord = {
      paymentId: newPaymentId(),
      merchant,
      input: {
        orderNo: input.orderNo,
        tokenSymbol: input.tokenSymbol,
        amount: input.amount,
        expireSec: input.expireSec,
        notifyUrl: input.notifyUrl,
      },
      createdAtMs: this.now(),
      phase: 'pending',
      confirmations: 0,
      txId: null,
      paymentNetwork: null,
      paidAmount: null,
      amountRaw: null,
      blockNum: null,
      paidAt: null,
      webhookBody: null,
    };
    this.byId.set(record.paymentId, record);
    this.byOrder.set(orderKey, record.paymentId);
    while (this.byId.size > this.retain) this.#dropOldest();
    return record;
  }

  /** Moves a payment to another order number (amendments), refusing one the merchant already uses. */
  renameOrder(record: PaymentRecord, orderNo: string): void {
    const key = this.freeOrderKey(record.merchant, orderNo);
    this.byOrder.delete(`${record.merchant.apiKey}\n${record.input.orderNo}`);
    this.byOrder.set(key, record.paymentId);
  }

  private freeOrderKey(merchant: ResolvedMerchant, orderNo: string): string {
    const orderKey = `${merchant.apiKey}\n${orderNo}`;
    const existing = this.byOrder.get(orderKey);
    if (existing !== undefined) {
      // Without an idempotency key, the order number is how a merchant avoids paying twice for one order.
      throw new SimulatorError('DUPLICATE_ORDER_NO', `A payment for orderNo "${orderNo}" already exists: ${existing}.`);
    }
    return orderKey;
  }

  #dropOldest(): void {
    const oldest = this.byId.values().next().value as PaymentRecord;
    this.byId.delete(oldest.paymentId);
    const orderKey = `${oldest.merchant.apiKey}\n${oldest.input.orderNo}`;
    if (this.byOrder.get(orderKey) === oldest.paymentId) this.byOrder.delete(orderKey);
    this.dropped += 1;
  }

  get(paymentId: string): PaymentRecord | undefined {
    return this.byId.get(paymentId);
  }

  /** The record, or PAYMENT_NOT_FOUND. */
  require(paymentId: unknown): PaymentRecord {
    const record = typeof paymentId === 'string' ? this.byId.get(paymentId) : undefined;
    if (record === undefined) throw new SimulatorError('PAYMENT_NOT_FOUND', `No payment ${JSON.stringify(paymentId)}.`);
    return record;
  }

  all(): PaymentRecord[] {
    return [...this.byId.values()];
  }

  status(record: PaymentRecord): SimulatedPayment['status'] {
    if (record.phase === 'paid') return 'PAID';
    if (record.phase === 'expired') return 'EXPIRED';
    // Once the payer's transaction is seen, the payment no longer expires while it gathers confirmations.
    if (record.phase === 'pending' && this.now() >= record.createdAtMs + record.input.expireSec * 1000)
      return 'EXPIRED';
    return 'PENDING';
  }

  view(record: PaymentRecord): SimulatedPayment {
    return {
      paymentId: record.paymentId,
      status: this.status(record),
      ...record.input,
      createdAt: new Date(record.createdAtMs).toISOString(),
      expiresAt: new Date(record.createdAtMs + record.input.expireSec * 1000).toISOString(),
      requiredConfirmations: record.merchant.confirmations,
      confirmations: record.confirmations,
      txId: record.txId,
      paymentNetwork: record.paymentNetwork,
      paidAmount: record.paidAmount,
      amountRaw: record.amountRaw,
      blockNum: record.blockNum,
      paidAt: record.paidAt,
    };
  }
}
