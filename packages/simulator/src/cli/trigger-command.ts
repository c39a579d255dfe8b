import type { DeliveryRecord } from '../core/delivery-log.js';
import type { PayOptions } from '../core/pay-options.js';
import type { SimulatedPayment } from '../core/payment-store.js';
import type { PayResult } from '../core/simulator-core.js';
import { startSimulator } from '../simulator.js';
import { integerFlag, parse } from './args.js';
import { callControl, DEFAULT_SIMULATOR_URL, simulatorUrl } from './control-client.js';
import { DEFAULT_SECRETS_FILE, loadDevSecrets } from './dev-secrets.js';
import { result } from './format.js';
import type { Io } from './io.js';
import { runningSimulatorPid, STATE_FILE } from './simulator-state.js';
import { EXIT, UnreachableError, UsageError } from './usage-error.js';
import { setupProblem } from './webhook-target.js';

export const TRIGGER_HELP = `Usage: service-pay trigger payment.paid [options]

Creates a test payment and pays it, so its signed payment.paid webhook goes out, and prints each attempt
as it is answered until every delivery has finished. Says which simulator took the payment and where the
webhook goes. A first attempt refused because of the app's set-up (401: the app's secret is not the one
'listen' printed; 404: no route at that path; nothing listening) is explained at once and trigger stops
there (exit 1): the simulator keeps retrying on its own schedule. Talks to the simulator that 'service-pay listen' (or
'simulate') runs. When none answers and --forward-to is given, runs a simulator of its own for this one
event (standalone), with the dev keys of ${DEFAULT_SECRETS_FILE}.

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

Exit codes: 0 every delivery got a 2xx, 1 some did not (or are still retrying at --wait-ms, or the
simulator refused), 2 bad usage, 3 no simulator answered (and no --forward-to to run one).

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
    const running = await callControl<{ forwardTo?: string | null }>(baseUrl, 'GET', '');
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
    // Each attempt is printed as it is answered. A first attempt refused because of the app's set-up (a
    // wrong secret, a wrong path, nothing listening) is explained at once, and trigger stops there: the
    // running simulator keeps retrying on the spec's schedule, and no retry fixes a set-up.
    const printed = new Map<string, number>();
    const show = (d: DeliveryRecord) => {
      for (const a of d.attempts.slice(printed.get(d.deliveryId) ?? 0)) {
        const next = a.nextRetryInMs === null ? ` -> ${d.state}` : `; retry in ${a.nextRetryInMs} ms`;
        if (!v.json) io.out(`${d.deliveryId} ${d.kind} attempt ${a.attempt}: ${result(a)} (${a.latencyMs} ms)${next}`);
      }
      printed.set(d.deliveryId, d.attempts.length);
    };
    const problems = new Set<string>();
    const stopEarly = (d: DeliveryRecord) => {
      const first = d.attempts[0];
      const problem = first === undefined || standalone ? null : setupProblem(first, destination);
      if (problem !== null) problems.add(problem);
      return problem !== null;
    };
    const { deliveries, stopped } = await settle(target, paid.paymentId, deliveryIds.length, waitMs, (d) => {
      show(d);
      return stopEarly(d);
    });
    const ok = !stopped && deliveries.every((d) => d.state === 'succeeded');
    if (v.json) io.out(JSON.stringify({ payment: paid, deliveries, problems: [...problems] }, null, 2));
    else {
      for (const d of deliveries)
        if (!FINAL.has(d.state) && !stopped) io.out(`${d.deliveryId} ${d.kind}: still ${d.state} after ${waitMs} ms`);
      for (const problem of problems) io.err(`fix: ${problem}`);
      if (stopped)
        io.err(
          `The simulator at ${baseUrl} keeps retrying on its schedule; 'service-pay deliveries' shows the attempts.`,
        );
    }
    return ok ? EXIT.OK : EXIT.FAILURE;
  } finally {
    await target.close();
  }
}

/**
 * Polls until every delivery of the payment is final, the wait is over, or `onUpdate` (called with each
 * delivery at every poll) says to stop.
 */
async function settle(
  target: Target,
  paymentId: string,
  count: number,
  waitMs: number,
  onUpdate: (delivery: DeliveryRecord) => boolean,
): Promise<{ deliveries: DeliveryRecord[]; stopped: boolean }> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const deliveries = await target.deliveries(paymentId);
    let stopped = false;
    for (const d of deliveries) if (onUpdate(d)) stopped = true;
    const done = deliveries.length >= count && deliveries.every((d) => FINAL.has(d.state));
    if (stopped || done || Date.now() >= deadline) return { deliveries, stopped };
    await new Promise((r) => setTimeout(r, 50));
  }
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
