import { WebhookError } from '../errors/webhook-error.js';
import {
  countOrNullRule,
  type Described,
  decimalRule,
  digitsOrNullRule,
  digitsRule,
  type FieldRule,
  isoMillisRule,
  isPaymentIdOfPrintableBody,
  isTextOfPrintableBody,
  paymentIdRule,
  text,
  validatorOf,
} from './payment-fields.js';

/** The only event type this SDK handles. */
export const PAYMENT_PAID = 'payment.paid';

/**
 * Spec section 2.3, field by field. The `PaymentPaidEvent` type is derived from these rules and the
 * payload is checked against them, so the two cannot disagree.
 */
const PAYMENT_PAID_FIELDS = Object.freeze({
  /** Always `payment.paid`. */
  event: { check: (v: unknown): v is 'payment.paid' => v === PAYMENT_PAID, rule: 'must be "payment.paid"' },
  /** Payment identifier, starts with `p_`. */
  paymentId: paymentIdRule,
  /** The merchant's order number given at creation. */
  orderNo: text,
  /** On-chain transaction identifier. */
  txId: text,
  /** Symbol of the token paid, such as `USDT`. */
  tokenSymbol: text,
  /** Network the payment was made on. */
  paymentNetwork: text,
  /** Decimal amount in token units, as a string (compare with `compareAmounts`, never with floats). */
  amount: decimalRule,
  /** The amount in the token's smallest unit: integer digits. */
  amountRaw: digitsRule,
  /** Block number as a digit string; null when no on-chain record exists. */
  blockNum: digitsOrNullRule,
  /** Confirmation count; null when no on-chain record exists. */
  confirmations: countOrNullRule,
  /** ISO 8601 UTC with milliseconds, such as `2026-11-21T10:00:00.000Z`. */
  paidAt: isoMillisRule,
} satisfies Record<string, FieldRule<unknown>>);

/**
 * The `payment.paid` webhook payload, spec section 2.3, fields exactly as named there.
 *
 * Unknown extra fields the service may add later are kept on the object (forward compatible), but only
 * these are typed and validated.
 *
 * @example
 * ```ts
 * const onPaymentPaid = async (event: PaymentPaidEvent) => {
 *   console.log(event.paymentId, event.orderNo, event.amount, event.tokenSymbol);
 * };
 * ```
 */
export type PaymentPaidEvent = Described<typeof PAYMENT_PAID_FIELDS>;

const validator = validatorOf(PAYMENT_PAID_FIELDS);

/**
 * The same rules as `validator.matches`, each called by its field's name. This runs on every delivery: a
 * loop over the table makes every field read a megamorphic keyed load and every check an indirect call,
 * which costs about a tenth of a delivery's verification (measured against this form). The
 * rules themselves still come from the one table, and event.test.ts holds this to the spec field by field.
 */
function isPaymentPaidEvent(body: Record<string, unknown>, printable: boolean): boolean {
  const f = PAYMENT_PAID_FIELDS;
  const isText = printable ? isTextOfPrintableBody : f.orderNo.check;
  return (
    f.event.check(body.event) &&
    (printable ? isPaymentIdOfPrintableBody(body.paymentId) : f.paymentId.check(body.paymentId)) &&
    isText(body.orderNo) &&
    isText(body.txId) &&
    isText(body.tokenSymbol) &&
    isText(body.paymentNetwork) &&
    f.amount.check(body.amount) &&
    f.amountRaw.check(body.amountRaw) &&
    f.blockNum.check(body.blockNum) &&
    f.confirmations.check(body.confirmations) &&
    f.paidAt.check(body.paidAt)
  );
}

/**
 * Checks a parsed, signature-verified body against spec 2.3 and narrows its type. Every problem is
 * reported at once, so one log line tells the whole story. `printable`: the caller found the body's bytes
 * to be printable ASCII with no escapes, so every text field is too, and only its length is checked.
 */
export function assertPaymentPaidEvent(
  body: Record<string, unknown>,
  printable = false,
): asserts body is Record<string, unknown> & PaymentPaidEvent {
  if (isPaymentPaidEvent(body, printable)) return;
  throw new WebhookError(
    'INVALID_PAYLOAD',
    `The payment.paid payload is invalid: ${validator.problems(body).join('; ')}.`,
  );
}
