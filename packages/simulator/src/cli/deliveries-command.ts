import type { DeliveryRecord } from '../core/delivery-log.js';
import { integerFlag, parse } from './args.js';
import { callControl, DEFAULT_SIMULATOR_URL, simulatorUrl } from './control-client.js';
import { deliveryTable } from './format.js';
import type { Io } from './io.js';
import { EXIT, UsageError } from './usage-error.js';

export const DELIVERIES_HELP = `Usage: service-pay deliveries [options]

Prints the delivery log of the running simulator ('service-pay listen' or 'simulate'): one line per
delivery, newest last, with its state, its attempts and the last answer.

Options:
  --payment ID            only this payment's deliveries
  --state STATE           scheduled, in-flight, waiting-retry, succeeded, failed or cancelled
  --limit N               the latest N, default 20 (0: all)
  --simulator URL         default $SERVICE_PAY_SIMULATOR_URL or ${DEFAULT_SIMULATOR_URL}
  --json                  print the deliveries, attempts included, as a JSON array
  -h, --help              show this help

Exit codes: 0 printed, 1 the simulator refused, 2 bad usage, 3 no simulator answered.`;

const FLAGS = {
  payment: { type: 'string' },
  state: { type: 'string' },
  limit: { type: 'string' },
  simulator: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const STATES = ['scheduled', 'in-flight', 'waiting-retry', 'succeeded', 'failed', 'cancelled'];

export async function deliveriesCommand(args: string[], io: Io): Promise<number> {
  const v = parse(args, FLAGS);
  if (v.help) {
    io.out(DELIVERIES_HELP);
    return EXIT.OK;
  }
  const limit = integerFlag(v.limit, 'limit') ?? 20;
  if (limit < 0) throw new UsageError('--limit must be 0 or more');
  if (v.state !== undefined && !STATES.includes(v.state))
    throw new UsageError(`--state must be one of ${STATES.join(', ')}, got ${JSON.stringify(v.state)}`);
  const query = new URLSearchParams();
  if (v.payment !== undefined) query.set('paymentId', v.payment);
  if (v.state !== undefined) query.set('state', v.state);
  // The log comes in pages (oldest first): follow them to the end, then keep the newest --limit.
  const deliveries: DeliveryRecord[] = [];
  for (let after: string | null = null; ; ) {
    if (after !== null) query.set('after', after);
    const answer: { deliveries: DeliveryRecord[]; next?: string | null } = await callControl(
      simulatorUrl(v.simulator),
      'GET',
      `/deliveries${query.size > 0 ? `?${query}` : ''}`,
    );
    deliveries.push(...answer.deliveries);
    after = answer.next ?? null;
    if (after === null) break;
    if (limit !== 0 && deliveries.length > limit) deliveries.splice(0, deliveries.length - limit);
  }
  const shown = limit === 0 ? deliveries : deliveries.slice(-limit);
  if (v.json) io.out(JSON.stringify(shown, null, 2));
  else if (shown.length === 0) io.out('no deliveries yet');
  else io.out(deliveryTable(shown));
  return EXIT.OK;
}
