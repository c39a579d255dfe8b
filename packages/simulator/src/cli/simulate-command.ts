import { readFile } from 'node:fs/promises';
import { SimulatorError } from '../core/errors.js';
import { generateMerchant, type MerchantConfig } from '../core/merchant.js';
import type { SimulatorOptions } from '../core/options.js';
import { isLoopbackHost } from '../http/control-access.js';
import { type Simulator, startSimulator } from '../simulator.js';
import { integerFlag, numberFlag, parse } from './args.js';
import { callControl } from './control-client.js';
import { DEFAULT_SECRETS_FILE, loadDevSecrets } from './dev-secrets.js';
import { attemptLine } from './format.js';
import type { Io } from './io.js';
import { API_SECRET, readOptionalSecret, WEBHOOK_SECRET_OF_SIMULATE } from './secret-source.js';
import { runningSimulatorPid, STATE_FILE, TOKEN_ENV, writeSimulatorState } from './simulator-state.js';
import { EXIT, UsageError } from './usage-error.js';
import { checkWebhookTarget } from './webhook-target.js';

const RUN_FLAGS_HELP = `  --port N                        default 4010; 0 picks a free port
  --host HOST                     default 127.0.0.1; another address puts the control API on the network
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
  --config FILE                   JSON with any of: port, host, merchants, retry, faults,
                                  confirmationIntervalMs, tokenDecimals, seed, limits, retain,
                                  controlToken. Flags win.
  --quiet                         do not print delivery attempts
  --json                          print JSON lines: {"event":"started",...}, then one
                                  {"event":"attempt",...} per delivery attempt
  -h, --help                      show this help`;

export const SIMULATE_HELP = `Usage: service-pay simulate [options]

Runs the payment service locally: the dashboard at /, the signed merchant API under /v1, signed
payment.paid webhooks with the spec's retries, and a control API under /_simulator. Prints the merchant
keys and URLs, then one line per delivery attempt. Stop it with Ctrl+C.

Options:
  --api-key KEY                   one merchant's keys; generated when left out
  --api-secret-file FILE          its API secret from FILE (else $SERVICE_API_SECRET)
  --webhook-secret-file FILE      its webhook secret from FILE (else $SERVICE_WEBHOOK_SECRET)
  --api-secret SECRET             the same on the command line (visible in ps: a warning)
  --webhook-secret SECRET
  --forward-to URL                send every webhook here instead of the payment's notifyUrl
${RUN_FLAGS_HELP}

Then, with the printed keys:
  curl -X POST http://127.0.0.1:4010/_simulator/payments/<paymentId>/pay
  curl http://127.0.0.1:4010/_simulator/deliveries`;

export const LISTEN_HELP = `Usage: service-pay listen --forward-to URL [options]

Local development like 'stripe listen': runs the simulator and forwards the webhook of every payment it
pays to your app at URL, whatever notifyUrl the payment was created with. The merchant keys live in a
project-local file, created on the first run and reused after, so the webhook secret in your app's
.env keeps working; they are printed at start, with the dashboard's address. At start it sends one
unsigned POST to URL and says what it found: a 401 means the webhook route is there; nothing listening,
or a 404 (no route at this path), is said with the fix. A port held by another simulator (a listen left
running) is named with what it forwards to. Stop it with Ctrl+C.

Options:
  --forward-to URL                your app's webhook endpoint (required)
  --secrets-file FILE             default ${DEFAULT_SECRETS_FILE} (in the current folder)
${RUN_FLAGS_HELP}

Then, in another terminal:
  service-pay trigger payment.paid --amount 12.50
  service-pay deliveries
  service-pay resend <paymentId>      (again, now, once the app is fixed)`;

const RUN_FLAGS = {
  config: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
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
  json: { type: 'boolean' },
} as const;

const SIMULATE_FLAGS = {
  ...RUN_FLAGS,
  'api-key': { type: 'string' },
  'api-secret': { type: 'string' },
  'api-secret-file': { type: 'string' },
  'webhook-secret': { type: 'string' },
  'webhook-secret-file': { type: 'string' },
  'forward-to': { type: 'string' },
} as const;

const LISTEN_FLAGS = { ...RUN_FLAGS, 'forward-to': { type: 'string' }, 'secrets-file': { type: 'string' } } as const;

type RunValues = ReturnType<typeof parse<typeof RUN_FLAGS>>;

/** `service-pay simulate`: runs until `stopSignal` resolves (Ctrl+C in the real CLI). */
export async function simulateCommand(args: string[], io: Io, stopSignal: () => Promise<string>): Promise<number> {
  const v = parse(args, SIMULATE_FLAGS);
  if (v.help) {
    io.out(SIMULATE_HELP);
    return EXIT.OK;
  }
  const file = v.config === undefined ? {} : await readConfig(v.config);
  const merchantFlags =
    v['api-key'] ??
    v['api-secret'] ??
    v['api-secret-file'] ??
    v['webhook-secret'] ??
    v['webhook-secret-file'] ??
    v.confirmations;
  if (merchantFlags !== undefined && file.merchants !== undefined) {
    throw new UsageError(
      'give the merchant either in --config (merchants) or with --api-key/--api-secret(-file)/--webhook-secret(-file)/--confirmations, not both',
    );
  }
  // --config's merchants carry their own secrets: the environment is read only for the one-merchant form.
  const merchants: MerchantConfig[] = (file.merchants as MerchantConfig[] | undefined) ?? [
    generateMerchant({
      name: 'default',
      apiKey: v['api-key'],
      apiSecret: readOptionalSecret(io, v['api-secret'], v['api-secret-file'], API_SECRET),
      webhookSecret: readOptionalSecret(io, v['webhook-secret'], v['webhook-secret-file'], WEBHOOK_SECRET_OF_SIMULATE),
      confirmations: integerFlag(v.confirmations, 'confirmations'),
    }),
  ];
  const sim = await start(runOptions(v, file, merchants, v['forward-to']), v, io);
  // Listening for Ctrl+C before the banner: whoever reads it may stop us at once, and must get a clean stop.
  const stopped = stopSignal();
  io.out(v.json ? started(sim) : banner(sim));
  return runUntilStopped(sim, io, stopped);
}

/** `service-pay listen --forward-to URL`: `simulate` with the project's dev keys and forwarding. */
export async function listenCommand(args: string[], io: Io, stopSignal: () => Promise<string>): Promise<number> {
  const v = parse(args, LISTEN_FLAGS);
  if (v.help) {
    io.out(LISTEN_HELP);
    return EXIT.OK;
  }
  const forwardTo = v['forward-to'];
  if (forwardTo === undefined || forwardTo === '')
    throw new UsageError(
      "--forward-to is required (your app's webhook URL, such as http://127.0.0.1:3000/webhooks/service)",
    );
  const file = v.config === undefined ? {} : await readConfig(v.config);
  if (file.merchants !== undefined)
    throw new UsageError(
      'listen keeps its merchant in the secrets file; drop merchants from --config, or use simulate',
    );
  const { secrets, path, created } = await loadDevSecrets(v['secrets-file'] ?? DEFAULT_SECRETS_FILE, (line) =>
    io.err(line),
  );
  const merchant: MerchantConfig = {
    name: 'dev',
    apiKey: secrets.apiKey,
    apiSecret: secrets.apiSecret,
    webhookSecret: secrets.webhookSecret,
    ...(v.confirmations === undefined ? {} : { confirmations: integerFlag(v.confirmations, 'confirmations') }),
  };
  const options = runOptions(v, file, [merchant], forwardTo);
  const sim = await start(options, v, io).catch(async (error: unknown) => {
    throw await explainTakenPort(error, options);
  });
  const stopped = stopSignal(); // before the banner, as in simulate
  // Before the banner's "Ready", what is at the target: the route there, nothing listening, or a wrong path.
  const target = await checkWebhookTarget(forwardTo);
  if (v.json) io.out(started(sim, { secretsFile: path, secretsCreated: created, target }));
  else {
    io.out(
      [
        `Ready: forwarding the webhooks of every payment to ${forwardTo}`,
        banner(sim),
        `The dev keys above are kept in ${path} (${created ? 'created now' : 'reused'}): the same on every run here.`,
        'Trigger an event from another terminal: npx service-pay trigger payment.paid --amount 12.50',
        'Send a payment again once the app is fixed: npx service-pay resend <paymentId>',
        `Forward target: ${target.summary}`,
      ].join('\n'),
    );
  }
  return runUntilStopped(sim, io, stopped);
}

/**
 * A taken port, when what holds it is another service-pay simulator (a `listen` left running in another
 * terminal, which would keep taking `trigger`'s payments to its own target): says which, and how to stop it.
 */
async function explainTakenPort(error: unknown, options: SimulatorOptions): Promise<unknown> {
  if (!(error instanceof SimulatorError) || error.code !== 'PORT_IN_USE') return error;
  const url = `http://${options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host}:${options.port}`;
  try {
    const other = await callControl<{ forwardTo?: string | null }>(url, 'GET', '');
    const pid = runningSimulatorPid(url);
    return new SimulatorError(
      'PORT_IN_USE',
      `Port ${options.port} is taken by another service-pay simulator at ${url}${pid === undefined ? '' : ` (pid ${pid})`}, forwarding to ${other.forwardTo ?? 'the notifyUrl of each payment'}: a 'listen' still running? Stop it (Ctrl+C in its terminal${pid === undefined ? '' : `, or kill ${pid}`}), or give this one --port.`,
    );
  } catch {
    return error; // not a simulator: the port's own message says it is in use
  }
}

function runOptions(
  v: RunValues,
  file: Record<string, unknown>,
  merchants: MerchantConfig[],
  forwardTo: string | undefined,
): SimulatorOptions {
  const defined = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
  return {
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
      forwardTo,
    }),
  };
}

async function start(options: SimulatorOptions, v: RunValues, io: Io): Promise<Simulator> {
  const onDeliveryAttempt: SimulatorOptions['onDeliveryAttempt'] = v.quiet
    ? undefined
    : v.json
      ? ({ delivery, attempt }) =>
          io.out(
            JSON.stringify({
              event: 'attempt',
              deliveryId: delivery.deliveryId,
              paymentId: delivery.paymentId,
              kind: delivery.kind,
              url: delivery.url,
              state: delivery.state,
              ...attempt,
            }),
          )
      : (event) => io.out(attemptLine(event));
  try {
    return await startSimulator({ ...options, onDeliveryAttempt });
  } catch (error) {
    if (error instanceof SimulatorError && error.code === 'INVALID_OPTIONS') throw new UsageError(error.message);
    throw error;
  }
}

/**
 * Until `stopped` (Ctrl+C or SIGTERM), then stops the simulator. The caller listens for the signal BEFORE it
 * prints the start line: whoever reads that line may signal at once, and a signal that arrives before the
 * listener exists ends the process with the signal's default action (no exit code, state file left behind).
 */
async function runUntilStopped(sim: Simulator, io: Io, stopped: Promise<string>): Promise<number> {
  // trigger and deliveries, run from this folder, find this simulator's URL and control token here.
  const removeState = await writeSimulatorState(sim).catch((error: Error) => {
    io.err(`could not write ${STATE_FILE} (${error.message}); give trigger the token with ${TOKEN_ENV}`);
    return async () => undefined;
  });
  const signal = await stopped;
  io.err(`\n${signal}: stopping the simulator...`);
  await sim.stop();
  await removeState();
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
    'limits',
    'retain',
    'controlToken',
  ]);
  const unknown = Object.keys(parsed).filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw new UsageError(`--config ${path} has unknown keys: ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  return parsed as Record<string, unknown>;
}

/** The `--json` start line: everything the banner says, secrets included (they are test keys, printed anyway). */
function started(sim: Simulator, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event: 'started',
    url: sim.url,
    dashboard: sim.dashboardUrl,
    merchantApi: `${sim.url}/v1/payments`,
    controlApi: `${sim.url}/_simulator`,
    controlToken: sim.controlToken,
    host: sim.host,
    forwardTo: sim.forwardTo,
    merchants: sim.merchants,
    retry: sim.retry,
    faults: sim.faults,
    seed: sim.seed,
    ...extra,
  });
}

/**
 * A merchant's keys as environment variables, the names every example and README reads.
 *
 * @example
 * ```ts
 * envLines('http://127.0.0.1:4010', merchant); // ['SERVICE_API_URL=http://127.0.0.1:4010', 'SERVICE_API_KEY=ak_test_...', ...]
 * ```
 */
export function envLines(url: string, m: { apiKey: string; apiSecret: string; webhookSecret: string }): string[] {
  return [
    `SERVICE_API_URL=${url}`,
    `SERVICE_API_KEY=${m.apiKey}`,
    `SERVICE_API_SECRET=${m.apiSecret}`,
    `SERVICE_WEBHOOK_SECRET=${m.webhookSecret}`,
  ];
}

function banner(sim: Simulator): string {
  const local = isLoopbackHost(sim.host);
  const lines = [
    local
      ? `service-pay simulator listening on ${sim.url}`
      : `service-pay simulator listening on ${sim.host}:${sim.port} (${sim.host === '0.0.0.0' || sim.host === '::' ? 'every interface' : 'not loopback'}), here ${sim.url}`,
    // Beyond loopback the page cannot be handed the token (anyone who reaches the port would get it): the
    // URL's fragment carries it, and fragments are never sent in a request.
    `  dashboard     ${local ? sim.dashboardUrl : `${sim.dashboardUrl}#token=${sim.controlToken}`}`,
    `  merchant API  ${sim.url}/v1/payments`,
    `  control API   ${sim.url}/_simulator (header x-simulator-token for changes${local ? '' : ' and reads'})`,
    `  control token ${sim.controlToken}`,
  ];
  if (!local) {
    lines.unshift(
      `WARNING: the dashboard and control API are reachable from the network on ${sim.host}:${sim.port}; every control call needs the control token. Use --host 127.0.0.1 unless another machine must reach it.`,
    );
  }
  if (sim.forwardTo !== null) lines.push(`  forwarding    every webhook to ${sim.forwardTo}`);
  // The keys as the variables the examples and the SDK's READMEs read, in both simulate and listen: one
  // block to paste into the app's .env, whichever command started the simulator.
  for (const m of sim.merchants) {
    lines.push(
      `merchant ${m.name} (confirmations ${m.confirmations}); for your app's .env:`,
      ...envLines(sim.url, m).map((line) => `  ${line}`),
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
  lines.push(
    `pay a payment: curl -X POST -H 'x-simulator-token: ${sim.controlToken}' ${sim.url}/_simulator/payments/<paymentId>/pay`,
    'Press Ctrl+C to stop.',
  );
  return lines.join('\n');
}
