import type { PaymentPaidEvent } from '@service-pay/core';

/** The secret the benchmarks sign with. */
export declare const SECRET: string;
/** A realistic `payment.paid` event (about 330 bytes of JSON): payment `n` of `scope`. */
export declare function benchEvent(n: number, scope?: string, eventType?: string): PaymentPaidEvent;
/** `benchEvent(n, scope, eventType)` signed with SECRET. */
export declare function signedBenchEvent(
  n: number,
  scope?: string,
  eventType?: string,
  deliveryId?: string,
): { body: string; headers: Record<string, string> };
