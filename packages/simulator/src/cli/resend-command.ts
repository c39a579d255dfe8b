import type { DeliveryRecord } from '../core/delivery-log.js';
import { integerFlag, parse } from './args.js';
import { ControlApiError, callControl, DEFAULT_SIMULATOR_URL, simulatorUrl } from './control-client.js';
import { followDeliveries } from './follow-deliveries.js';
import type { Io } from './io.js';
import { EXIT, UsageError } from './usage-error.js';

export const RESEND_HELP = `Usage: service-pay resend <paymentId> [options]

Sends a paid payment's payment.paid webhook again, now, like 'stripe events resend': a new delivery (a
fresh dl_ id, kind redelivery) of the same event, signed now, to where the running simulator forwards
('service-pay listen --forward-to URL'), else to the payment's notifyUrl. For after a fix: the simulator
gives up after its last attempt (8, about 2 minutes), and an app credits a payment once, so a resend of a
payment already credited is answered as a duplicate. Prints each attempt as 'trigger' does, each failure
with a 'fix:' line, and stops at a failure the app's set-up causes.

Options:
  --simulator URL         the running simulator, default $SERVICE_PAY_SIMULATOR_URL or ${DEFAULT_SIMULATOR_URL}
  --wait-ms MS            how long to wait for the delivery, default 60000; 0: do not wait
  --json                  print { paymentId, deliveries, problems, stopped } as JSON
  -h, --help              show this help

Exit codes: 0 the delivery got a 2xx; 1 it did not, or the simulator refused (PAYMENT_NOT_FOUND: no such
payment in this simulator; PAYMENT_NOT_PAID: nothing was sent yet); 2 bad usage; 3 no simulator answered.

Example:
  service-pay deliveries --state failed
  service-pay resend p_0123456789abcdef`;

const FLAGS = {
  simulator: { type: 'string' },
  'wait-ms': { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** `service-pay resend <paymentId>`: the running simulator's redeliver, followed as `trigger` follows. */
export async function resendCommand(args: string[], io: Io): Promise<number> {
  const [paymentId, ...rest] = args;
  if (paymentId === '--help' || paymentId === '-h') {
    io.out(RESEND_HELP);
    return EXIT.OK;
  }
  if (paymentId === undefined || paymentId.startsWith('-'))
    throw new UsageError(
      "name the payment to resend: 'service-pay resend <paymentId>' ('service-pay deliveries' lists them)",
    );
  const v = parse(rest, FLAGS);
  if (v.help) {
    io.out(RESEND_HELP);
    return EXIT.OK;
  }
  const waitMs = integerFlag(v['wait-ms'], 'wait-ms') ?? 60_000;
  if (waitMs < 0 || waitMs > 3_600_000) throw new UsageError('--wait-ms must be from 0 to 3600000');
  const baseUrl = simulatorUrl(v.simulator);
  const running = await callControl<{ forwardTo?: string | null }>(baseUrl, 'GET', '');
  let deliveryIds: string[];
  try {
    ({ deliveryIds } = await callControl<{ deliveryIds: string[] }>(
      baseUrl,
      'POST',
      `/payments/${encodeURIComponent(paymentId)}/redeliver`,
      {},
    ));
  } catch (error) {
    throw explained(error, paymentId, baseUrl);
  }
  const destination = running.forwardTo ?? "the payment's notifyUrl";
  if (!v.json)
    io.err(`resend: ${paymentId} again by the simulator at ${baseUrl}, ${deliveryIds.join(', ')} to ${destination}`);
  const followed = await followDeliveries(
    async () =>
      (
        await callControl<{ deliveries: DeliveryRecord[] }>(
          baseUrl,
          'GET',
          `/deliveries?paymentId=${encodeURIComponent(paymentId)}`,
        )
      ).deliveries,
    { deliveryIds, waitMs, target: destination, io, json: v.json === true },
  );
  const stopped = followed.stoppedBy !== null;
  if (v.json)
    io.out(JSON.stringify({ paymentId, deliveries: followed.deliveries, problems: followed.fixes, stopped }, null, 2));
  else if (stopped)
    io.err(
      `Stopped there: every retry would get the same answer. Fix the app, then 'service-pay resend ${paymentId}' again.`,
    );
  else if (!followed.settled)
    for (const d of followed.deliveries) io.out(`${d.deliveryId} ${d.kind}: still ${d.state} after ${waitMs} ms`);
  return !stopped && followed.deliveries.every((d) => d.state === 'succeeded') ? EXIT.OK : EXIT.FAILURE;
}

/** The simulator's refusal, with what to do about it. */
function explained(error: unknown, paymentId: string, baseUrl: string): unknown {
  if (!(error instanceof ControlApiError)) return error;
  if (error.code === 'PAYMENT_NOT_FOUND')
    return new ControlApiError(
      error.code,
      error.status,
      `The simulator at ${baseUrl} has no payment ${JSON.stringify(paymentId)}: 'service-pay deliveries' lists its payments (a simulator forgets them when it stops), or point --simulator at the one that made it.`,
    );
  if (error.code === 'PAYMENT_NOT_PAID')
    return new ControlApiError(
      error.code,
      error.status,
      `${error.message} Pay it first: curl -X POST -H 'x-simulator-token: ...' ${baseUrl}/_simulator/payments/${encodeURIComponent(paymentId)}/pay`,
    );
  return error;
}
