import { readFile } from 'node:fs/promises';
import type { DeliveryAttemptEvent } from '../delivery-log.js';
import { SimulatorError } from '../errors.js';
import { generateMerchant, type MerchantConfig } from '../merchant.js';
import type { SimulatorOptions } from '../options.js';
import { startSimulator } from '../simulator.js';
import { integerFlag, numberFlag, parse } from './args.js';
import type { Io } from './io.js';
import { EXIT, UsageError } from './usage-error.js';

export const SIMULATE_HELP = `Usage: service-pay simulate [options]

Runs the payment service locally: the signed merchant API under /v1, signed payment.paid webhooks with
the spec's retries, and a control API under /_simulator. Prints the merchant keys and URLs, then one
line per delivery attempt. Stop it with Ctrl+C.

Options:
  --config FILE                   JSON with any of: port, host, merchants [{ apiKey, apiSecret,
                                  webhookSecret, confirmations, name }], retry, faults,
                                  confirmationIntervalMs, tokenDecimals, seed. Flags win over the file.
  --port N                        default 4010; 0 picks a free port
  --host HOST                     default 127.0.0.1 (the control API has no auth: keep it local)
  --api-key KEY                   one merchant's keys; generated when left out
  --api-secret SECRET
  --webhook-secret SECRET
  --confirmations N               confirmations before PAID, default 3
  --confirmation-interval-ms MS   pause between confirmations, default 0
  --max-attempts N                webhook attempts, 1 to 8, default 8
  --retry-base-ms MS              first backoff pause, default 1000
  --retry-factor F                backoff multiplier, default 2
  --timeout-ms MS                 webhook answer limit, default 5000
  --duplicate-rate R              chance of one extra delivery after the first, 0 to 1
  --concurrent-duplicate-rate R   chance of one extra delivery at the same moment, 0 to 1
  --drop-response-rate R          chance, per attempt, that the answer is ignored, 0 to 1
  --clock-skew-sec S              sign webhooks with now + S seconds
  --seed N                        seed of the fault generator, to repeat a run
  --quiet                         do not print delivery attempts
  -h, --help                      show this help

Then, with the printed keys:
  curl -X POST http://127.0.0.1:4010/_simulator/payments/<paymentId>/pay
  curl http://127.0.0.1:4010/_simulator/deliveries`;

const FLAGS = {
  config: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string' },
  'api-secret': { type: 'string' },
  'webhook-secret': { type: 'string' },
  confirmations: { type: 'string' },
  'confirmation-interval-ms': { type: 'string' },
  'max-attempts': { type: 'string' },
  'retry-base-ms': { type: 'string' },
  'retry-factor': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'duplicate-rate': { type: 'string' },
  'concurrent-duplicate-rate': { type: 'string' },
  'drop-response-rate': { type: 'string' },
  'clock-skew-sec': { type: 'string' },
  seed: { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

/** Runs until `stopSignal` resolves (Ctrl+C in the real CLI). */
export async function simulateCommand(args: string[], io: Io, stopSignal: () => Promise<string>): Promise<number> {
  const v = parse(args, FLAGS);
  if (v.help) {
    io.out(SIMULATE_HELP);
    return EXIT.OK;
  }
  const file = v.config === undefined ? {} : await readConfig(v.config);
  const merchantFlags = v['api-key'] ?? v['api-secret'] ?? v['webhook-secret'] ?? v.confirmations;
  if (merchantFlags !== undefined && file.merchants !== undefined) {
    throw new UsageError(
      'give the merchant either in --config (merchants) or with --api-key/--api-secret/--webhook-secret/--confirmations, not both',
    );
  }
  const merchants: MerchantConfig[] = (file.merchants as MerchantConfig[] | undefined) ?? [
    generateMerchant({
      name: 'default',
      apiKey: v['api-key'],
      apiSecret: v['api-secret'],
      webhookSecret: v['webhook-secret'],
      confirmations: integerFlag(v.confirmations, 'confirmations'),
    }),
  ];
  const defined = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
  const options: SimulatorOptions = {
    ...file,
    merchants,
    port: integerFlag(v.port, 'port') ?? (file.port as number | undefined) ?? 4010,
    host: v.host ?? (file.host as string | undefined) ?? '127.0.0.1',
    retry: {
      ...(file.retry as object | undefined),
      ...defined({
        maxAttempts: integerFlag(v['max-attempts'], 'max-attempts'),
        baseDelayMs: integerFlag(v['retry-base-ms'], 'retry-base-ms'),
        factor: numberFlag(v['retry-factor'], 'retry-factor'),
        timeoutMs: integerFlag(v['timeout-ms'], 'timeout-ms'),
      }),
    },
    faults: {
      ...(file.faults as object | undefined),
      ...defined({
        duplicateRate: numberFlag(v['duplicate-rate'], 'duplicate-rate'),
        concurrentDuplicateRate: numberFlag(v['concurrent-duplicate-rate'], 'concurrent-duplicate-rate'),
        dropResponseRate: numberFlag(v['drop-response-rate'], 'drop-response-rate'),
        clockSkewSec: integerFlag(v['clock-skew-sec'], 'clock-skew-sec'),
      }),
    },
    ...defined({
      confirmationIntervalMs: integerFlag(v['confirmation-interval-ms'], 'confirmation-interval-ms'),
      seed: integerFlag(v.seed, 'seed'),
    }),
    onDeliveryAttempt: v.quiet ? undefined : (event) => io.out(attemptLine(event)),
  };

  let sim: Awaited<ReturnType<typeof startSimulator>>;
  try {
    sim = await startSimulator(options);
  } catch (error) {
    if (error instanceof SimulatorError && error.code === 'INVALID_OPTIONS') throw new UsageError(error.message);
    throw error;
  }
  io.out(banner(sim));
  const signal = await stopSignal();
  io.err(`\n${signal}: stopping the simulator...`);
  await sim.stop();
  return EXIT.OK;
}

async function readConfig(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --config ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError(`--config ${path} must hold a JSON object`);
  const known = new Set([
    'port',
    'host',
    'merchants',
    'retry',
    'faults',
    'confirmationIntervalMs',
    'tokenDecimals',
    'seed',
  ]);
  const unknown = Object.keys(parsed).filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw new UsageError(`--config ${path} has unknown keys: ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  return parsed as Record<string, unknown>;
}

function banner(sim: Awaited<ReturnType<typeof startSimulator>>): string {
  const lines = [
    `service-pay simulator listening on ${sim.url}`,
    `  merchant API  ${sim.url}/v1/payments`,
    `  control API   ${sim.url}/_simulator`,
  ];
  for (const m of sim.merchants) {
    lines.push(
      `merchant ${m.name}`,
      `  apiKey         ${m.apiKey}`,
      `  apiSecret      ${m.apiSecret}`,
      `  webhookSecret  ${m.webhookSecret}`,
      `  confirmations  ${m.confirmations}`,
    );
  }
  const { maxAttempts, baseDelayMs, factor, timeoutMs } = sim.retry;
  lines.push(
    `webhooks: up to ${maxAttempts} attempts, backoff ${baseDelayMs} ms x ${factor}, timeout ${timeoutMs} ms, seed ${sim.seed}`,
  );
  const f = sim.faults;
  if (f.duplicateRate || f.concurrentDuplicateRate || f.dropResponseRate || f.clockSkewSec) {
    lines.push(
      `faults: duplicates ${f.duplicateRate}, concurrent ${f.concurrentDuplicateRate}, dropped answers ${f.dropResponseRate}, clock skew ${f.clockSkewSec} s`,
    );
  }
  lines.push(`pay a payment: curl -X POST ${sim.url}/_simulator/payments/<paymentId>/pay`, 'Press Ctrl+C to stop.');
  return lines.join('\n');
}

function attemptLine({ delivery, attempt }: DeliveryAttemptEvent): string {
  const result =
    attempt.status !== null && attempt.error === null ? `${attempt.status}` : (attempt.error ?? `${attempt.status}`);
  const next = attempt.nextRetryInMs === null ? ` -> ${delivery.state}` : `; retry in ${attempt.nextRetryInMs} ms`;
  return `${attempt.startedAt} ${delivery.deliveryId} ${delivery.paymentId} attempt ${attempt.attempt}: ${result} (${attempt.latencyMs} ms)${next}`;
}
