import type { DeliveryRecord } from '../core/delivery-log.js';
import type { PayOptions } from '../core/pay-options.js';
import type { SimulatedPayment } from '../core/payment-store.js';
import type { PayResult } from '../core/simulator-core.js';
import { startSimulator } from '../simulator.js';
import { integerFlag, parse } from './args.js';
import { callControl, DEFAULT_SIMULATOR_URL, simulatorUrl } from './control-client.js';
import { DEFAULT_SECRETS_FILE, loadDevSecrets } from './dev-secrets.js';
import { followDeliveries } from './follow-deliveries.js';
import type { Io } from './io.js';
import { runningSimulatorPid, STATE_FILE } from './simulator-state.js';
import { EXIT, UnreachableError, UsageError } from './usage-error.js';

export const TRIGGER_HELP = `Usage: service-pay trigger payment.paid [options]

Creates a test payment and pays it, so its signed payment.paid webhook goes out, and prints each attempt
as it is answered until every delivery has finished. Says which simulator took the payment and where the
webhook goes. Every failed attempt is followed by a 'fix:' line on stderr. A failure that the app's set-up
causes (nothing listening; 401: the app's secret is not the one 'listen' printed; 404: no route at that
path; 400, 405, 413, 415: something in front of the route changes the request; RAW_BODY_UNAVAILABLE: a
body parser ran first) is explained at once and trigger stops there (exit 1): no retry fixes it. The
simulator keeps retrying on its own schedule; 'service-pay resend <paymentId>' sends it again once the app
is fixed. Talks to the simulator that 'service-pay listen' (or 'simulate') runs. When none answers and
--forward-to is given, runs a simulator of its own for this one event (standalone), with the dev keys of
${DEFAULT_SECRETS_FILE}; the standalone-only options are refused when a simulator runs.

Events: payment.paid (the only event of the spec)

Options:
  --amount AMOUNT         decimal string, default 10.00
  --order NO              the order number, default a fresh test_ one
  --token SYMBOL          default USDT
  --forward-to URL        send the webhook here (default: where the running simulator forwards)
  --simulator URL         the running simulator, default $SERVICE_PAY_SIMULATOR_URL or ${DEFAULT_SIMULATOR_URL}
  --duplicates N          extra deliveries of the same event (fresh dl_ ids)
  --concurrent            send the duplicates (1 without --duplicates) at the same moment as the first
  --drop-responses N      ignore the answers to the first N attempts (the sender retries)
  --delay-ms MS           hold each delivery this long before its first attempt
  --fail-all              the endpoint is "down": every attempt fails without a request
  --clock-skew-sec S      sign with now + S seconds
  --wait-ms MS            how long to wait for the deliveries, default 60000; 0: do not wait
  --secrets-file FILE     standalone only, default ${DEFAULT_SECRETS_FILE}
  --max-attempts N        standalone only: webhook attempts, 1 to 8, default 8
  --retry-base-ms MS      standalone only: first backoff pause, default 1000
  --json                  print { payment, deliveries } as JSON
  -h, --help              show this help

Exit codes: 0 every delivery got a 2xx; 1 some did not (a set-up failure, still retrying at --wait-ms, or
the simulator refused); 2 bad usage (a standalone-only option while a simulator runs, too); 3 no simulator
answered (and no --forward-to to run one).

Example:
  service-pay trigger payment.paid --amount 12.50 --duplicates 1 --concurrent`;

const FLAGS = {
  amount: { type: 'string' },
  order: { type: 'string' },
  token: { type: 'string' },
  'forward-to': { type: 'string' },
  simulator: { type: 'string' },
  duplicates: { type: 'string' },
  concurrent: { type: 'boolean' },
  'drop-responses': { type: 'string' },
  'delay-ms': { type: 'string' },
  'fail-all': { type: 'boolean' },
  'clock-skew-sec': { type: 'string' },
  'wait-ms': { type: 'string' },
  'secrets-file': { type: 'string' },
  'max-attempts': { type: 'string' },
  'retry-base-ms': { type: 'string' },
  json: { type: 'boolean' },
} as const;

const EVENTS = ['payment.paid'];
const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** What trigger needs from a simulator, in process or over the control API. */
interface Target {
  create(input: Record<string, unknown>): Promise<SimulatedPayment>;
  pay(paymentId: string, options: PayOptions): Promise<PayResult>;
  deliveries(paymentId: string): Promise<DeliveryRecord[]>;
  close(): Promise<void>;
}

export async function triggerCommand(args: string[], io: Io): Promise<number> {
  const [event, ...rest] = args;
  if (event === '--help' || event === '-h' || event === undefined) {
    if (event === undefined) throw new UsageError(`name the event to trigger: ${EVENTS.join(', ')}`);
    io.out(TRIGGER_HELP);
    return EXIT.OK;
  }
  const v = parse(rest, FLAGS);
  if (v.help) {
    io.out(TRIGGER_HELP);
    return EXIT.OK;
  }
  if (!EVENTS.includes(event)) throw new UsageError(`unknown event '${event}'; known: ${EVENTS.join(', ')}`);
  const forwardTo = v['forward-to'];
  if (forwardTo !== undefined && (!/^https?:\/\//.test(forwardTo) || !URL.canParse(forwardTo)))
    throw new UsageError(`--forward-to must be an http:// or https:// URL, got ${JSON.stringify(forwardTo)}`);
  const waitMs = integerFlag(v['wait-ms'], 'wait-ms') ?? 60_000;
  if (waitMs < 0 || waitMs > 3_600_000) throw new UsageError('--wait-ms must be from 0 to 3600000');
  const pay: PayOptions = {
    duplicates: integerFlag(v.duplicates, 'duplicates'),
    concurrent: v.concurrent,
    dropResponses: integerFlag(v['drop-responses'], 'drop-responses'),
    delayMs: integerFlag(v['delay-ms'], 'delay-ms'),
    failAllAttempts: v['fail-all'],
    clockSkewSec: integerFlag(v['clock-skew-sec'], 'clock-skew-sec'),
    ...(forwardTo === undefined ? {} : { deliverTo: [forwardTo] }),
  };
  const input = {
    amount: v.amount,
    orderNo: v.order,
    tokenSymbol: v.token,
    ...(forwardTo === undefined ? {} : { notifyUrl: forwardTo }),
  };

  const baseUrl = simulatorUrl(v.simulator);
  let target: Target;
  let standalone = false;
  let destination: string;
  try {
    const running = await callControl<{ forwardTo?: string | null; retry?: { maxAttempts?: number } }>(
      baseUrl,
      'GET',
      '',
    );
    refuseStandaloneFlags(v, baseUrl, running.retry?.maxAttempts);
    target = remote(baseUrl);
    destination = forwardTo ?? running.forwardTo ?? "the payment's notifyUrl";
    const pid = runningSimulatorPid(baseUrl);
    // Which simulator took the payment, and where it sends the webhook: a `listen` left running elsewhere
    // would otherwise take it to its own old target, unseen.
    if (!v.json)
      io.err(
        `trigger: the simulator at ${baseUrl}${pid === undefined ? '' : ` (pid ${pid}, ${STATE_FILE})`}, webhooks to ${destination}`,
      );
  } catch (error) {
    // Standalone only when the user did not point at a simulator: a typo in --simulator must not be
    // papered over by a different simulator with different keys.
    if (!(error instanceof UnreachableError) || forwardTo === undefined || v.simulator !== undefined) throw error;
    target = await local(v, forwardTo);
    standalone = true;
    destination = forwardTo;
    if (!v.json)
      io.err(`trigger: no simulator at ${baseUrl}; a standalone one for this event, webhooks to ${destination}`);
  }
  try {
    const payment = await target.create(input);
    const { payment: paid, deliveryIds } = await target.pay(payment.paymentId, pay);
    if (!v.json)
      io.err(
        `${standalone ? 'standalone simulator' : baseUrl}: ${paid.paymentId} order ${paid.orderNo} ${paid.amount} ${paid.tokenSymbol} ${paid.status}, ${deliveryIds.length} ${deliveryIds.length === 1 ? 'delivery' : 'deliveries'}`,
      );
    // Each attempt is printed as it is answered, each failure with its fix. A failure caused by the app's
    // set-up (a wrong secret, a wrong path, a body parser in front of the route, nothing listening) ends the
    // wait at once: no retry fixes a set-up, and the running simulator keeps retrying on its own schedule.
    const followed = await followDeliveries(() => target.deliveries(paid.paymentId), {
      deliveryIds,
      waitMs,
      target: destination,
      io,
      json: v.json === true,
    });
    const stopped = followed.stoppedBy !== null;
    const ok = !stopped && followed.deliveries.every((d) => d.state === 'succeeded');
    if (v.json)
      io.out(
        JSON.stringify({ payment: paid, deliveries: followed.deliveries, problems: followed.fixes, stopped }, null, 2),
      );
    else {
      if (!followed.settled && !stopped)
        for (const d of followed.deliveries)
          if (!FINAL.has(d.state)) io.out(`${d.deliveryId} ${d.kind}: still ${d.state} after ${waitMs} ms`);
      if (stopped)
        io.err(
          standalone
            ? 'Stopped there: every retry would get the same answer. Fix the app, then trigger again.'
            : `Stopped there: every retry would get the same answer. The simulator at ${baseUrl} keeps retrying on its schedule; once the app is fixed, 'service-pay resend ${paid.paymentId}' sends it again now. 'service-pay deliveries' shows the attempts.`,
        );
    }
    return ok ? EXIT.OK : EXIT.FAILURE;
  } finally {
    await target.close();
  }
}

/**
 * Flags that shape a simulator trigger starts itself: a running simulator keeps its own keys and retry
 * schedule, so taking them silently would leave the user believing in a schedule that is not the one used.
 */
function refuseStandaloneFlags(
  v: ReturnType<typeof parse<typeof FLAGS>>,
  baseUrl: string,
  maxAttempts: number | undefined,
): void {
  const given = (['max-attempts', 'retry-base-ms', 'secrets-file'] as const).filter((f) => v[f] !== undefined);
  if (given.length === 0) return;
  const flags = given.map((f) => `--${f}`).join(', ');
  const them = given.length === 1 ? 'it' : 'them';
  throw new UsageError(
    `${flags}: only for a simulator trigger runs itself, and one already runs at ${baseUrl}${maxAttempts === undefined ? '' : ` (up to ${maxAttempts} attempts)`} with its own keys and retries. Leave ${them} out, or restart that simulator with ${them} ('service-pay listen --forward-to URL ${given.map((f) => `--${f} ...`).join(' ')}').`,
  );
}

function remote(baseUrl: string): Target {
  return {
    create: (input) => callControl(baseUrl, 'POST', '/payments', input),
    pay: (paymentId, options) =>
      callControl(baseUrl, 'POST', `/payments/${encodeURIComponent(paymentId)}/pay`, options),
    deliveries: async (paymentId) =>
      (
        await callControl<{ deliveries: DeliveryRecord[] }>(
          baseUrl,
          'GET',
          `/deliveries?paymentId=${encodeURIComponent(paymentId)}`,
        )
      ).deliveries,
    close: async () => undefined,
  };
}

async function local(v: ReturnType<typeof parse<typeof FLAGS>>, forwardTo: string): Promise<Target> {
  const { secrets } = await loadDevSecrets(v['secrets-file'] ?? DEFAULT_SECRETS_FILE);
  const retry = {
    ...(v['max-attempts'] === undefined ? {} : { maxAttempts: integerFlag(v['max-attempts'], 'max-attempts') }),
    ...(v['retry-base-ms'] === undefined ? {} : { baseDelayMs: integerFlag(v['retry-base-ms'], 'retry-base-ms') }),
  };
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  try {
    sim = await startSimulator({ merchants: [{ name: 'dev', ...secrets }], forwardTo, retry });
  } catch (error) {
    if ((error as { code?: string }).code === 'INVALID_OPTIONS') throw new UsageError((error as Error).message);
    throw error;
  }
  return {
    create: async (input) => sim.createPayment(input),
    pay: (paymentId, options) => sim.pay(paymentId, options),
    deliveries: async (paymentId) => sim.deliveries({ paymentId }),
    close: () => sim.stop(),
  };
}
