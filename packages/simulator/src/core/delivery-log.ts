/**
 * Why a delivery exists: the first one of a payment, an injected duplicate (after the previous one
 * settled, or at the same moment), or a redelivery asked for over the control API.
 *
 * @example
 * ```ts
 * const duplicates = sim.deliveries({ paymentId }).filter((d) => d.kind !== 'original');
 * ```
 */
export type DeliveryKind = 'original' | 'duplicate' | 'concurrent-duplicate' | 'redelivery';

/**
 * Where a delivery stands. The last three are final.
 *
 * @example
 * ```ts
 * const gaveUp = sim.deliveries({ state: 'failed' });
 * ```
 */
export type DeliveryState = 'scheduled' | 'in-flight' | 'waiting-retry' | 'succeeded' | 'failed' | 'cancelled';

/**
 * How one attempt ended. `dropped`: the receiver answered, but fault injection threw the answer away
 * and the sender treated it as a timeout. `endpoint-down`: fault injection (`failAllAttempts`) made the
 * attempt fail without sending anything, as if the merchant's endpoint were unreachable.
 *
 * @example
 * ```ts
 * const timeouts = delivery.attempts.filter((a) => a.outcome === 'timeout').length;
 * ```
 */
export type AttemptOutcome = 'succeeded' | 'http-error' | 'timeout' | 'network-error' | 'dropped' | 'endpoint-down';

/**
 * One HTTP attempt of a delivery, as the delivery log keeps it.
 *
 * @example
 * ```ts
 * const failed = sim.deliveries().flatMap((d) => d.attempts).filter((a: DeliveryAttempt) => a.outcome !== 'succeeded');
 * ```
 */
export interface DeliveryAttempt {
  /** 1-based. */
  attempt: number;
  /** ISO time the request got its connection. */
  startedAt: string;
  /** Milliseconds from connection to complete answer (or to giving up); 0 when nothing was sent. */
  latencyMs: number;
  /** The HTTP status the sender acted on; null for a timeout, network error or dropped answer. */
  status: number | null;
  /** What went wrong, in words; null for success. */
  error: string | null;
  outcome: AttemptOutcome;
  /** The start of the receiver's answer body (at most 512 characters). */
  responseBody: string;
  /** The `t` of the signature sent. */
  signatureTimestamp: number;
  /** The pause before the next attempt; null when this was the last. */
  nextRetryInMs: number | null;
}

/**
 * One delivery: a `dl_` id, kept across its retries, and its attempts.
 *
 * @example
 * ```ts
 * const [delivery]: DeliveryRecord[] = sim.deliveries({ paymentId });
 * console.log(delivery.state, delivery.attempts.map((a) => a.status));
 * ```
 */
export interface DeliveryRecord {
  deliveryId: string;
  paymentId: string;
  orderNo: string;
  /** The merchant's apiKey. */
  merchant: string;
  url: string;
  kind: DeliveryKind;
  state: DeliveryState;
  /** The exact JSON body sent (the same bytes on every attempt; only the signature changes). */
  body: string;
  createdAt: string;
  attempts: DeliveryAttempt[];
}

/**
 * What `onDeliveryAttempt` receives after each attempt.
 *
 * @example
 * ```ts
 * const onDeliveryAttempt = ({ delivery, attempt }: DeliveryAttemptEvent) =>
 *   console.log(delivery.deliveryId, attempt.attempt, attempt.status ?? attempt.error);
 * ```
 */
export interface DeliveryAttemptEvent {
  delivery: DeliveryRecord;
  attempt: DeliveryAttempt;
}
