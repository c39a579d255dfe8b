import { createRequire } from 'node:module';
import { SimulatorError } from '../core/errors.js';
import { ControlApiError } from './control-client.js';
import { DELIVERIES_HELP, deliveriesCommand } from './deliveries-command.js';
import type { Io } from './io.js';
import { MissingDriverError } from './ledger-source.js';
import { PAYMENTS_HELP, paymentsCommand } from './payments-command.js';
import { UnsafeFileError } from './private-files.js';
import { RESEND_HELP, resendCommand } from './resend-command.js';
import { SEND_HELP, sendCommand } from './send-command.js';
import { SIGN_HELP, signCommand } from './sign-command.js';
import { LISTEN_HELP, listenCommand, SIMULATE_HELP, simulateCommand } from './simulate-command.js';
import { TRIGGER_HELP, triggerCommand } from './trigger-command.js';
import { EXIT, UnreachableError, UsageError } from './usage-error.js';

export const MAIN_HELP = `Usage: service-pay <command> [options]

Commands:
  listen       run the simulator and forward every webhook to your app (--forward-to URL),
               with dev keys kept in .service-pay/dev-secrets.json
  trigger      create and pay a test payment: 'service-pay trigger payment.paid --amount 12.50'
  resend       send a paid payment's webhook again, now: 'service-pay resend p_...'
  deliveries   print the delivery log of the running simulator
  payments     the failing and flagged payments in your shop's database ('payments p_...': one story)
  simulate     run the payment service locally (dashboard, merchant API, webhooks, control API)
  send         sign payment.paid deliveries and POST them to your endpoint (no simulator)
  sign         print the signed headers and a curl command (webhook, or 'sign api')
  help [cmd]   show help

Options:
  -h, --help     show help (also after any command)
  -v, --version  print the version
  --json         (on every command) print JSON for scripts

Exit codes: 0 done, 1 the work failed, 2 bad usage, 3 no simulator answered.`;

const HELP: Record<string, string> = {
  listen: LISTEN_HELP,
  trigger: TRIGGER_HELP,
  resend: RESEND_HELP,
  deliveries: DELIVERIES_HELP,
  payments: PAYMENTS_HELP,
  simulate: SIMULATE_HELP,
  send: SEND_HELP,
  sign: SIGN_HELP,
};

/** Until Ctrl+C or a termination request. */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** The whole CLI: parses `args`, runs the command, returns the exit code. Never throws. */
export async function runCli(args: string[], io: Io, stopSignal: () => Promise<string> = untilSignal): Promise<number> {
  const [command, ...rest] = args;
  const json = rest.includes('--json');
  try {
    switch (command) {
      case 'simulate':
        return await simulateCommand(rest, io, stopSignal);
      case 'listen':
        return await listenCommand(rest, io, stopSignal);
      case 'trigger':
        return await triggerCommand(rest, io);
      case 'resend':
        return await resendCommand(rest, io);
      case 'deliveries':
        return await deliveriesCommand(rest, io);
      case 'payments':
        return await paymentsCommand(rest, io);
      case 'send':
        return await sendCommand(rest, io);
      case 'sign':
        return signCommand(rest, io);
      case 'help':
      case '-h':
      case '--help': {
        const topic = command === 'help' ? rest[0] : undefined;
        if (topic !== undefined && HELP[topic] === undefined) throw new UsageError(`unknown command '${topic}'`);
        io.out(topic === undefined ? MAIN_HELP : (HELP[topic] as string));
        return EXIT.OK;
      }
      case '-v':
      case '--version':
        io.out(String(createRequire(import.meta.url)('../package.json').version));
        return EXIT.OK;
      case undefined:
        io.err(MAIN_HELP);
        return EXIT.USAGE;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    const [code, name, message] = classify(error);
    // With --json, a failure is a JSON object on stderr too, so a script reads one format.
    if (json) io.err(JSON.stringify({ error: name, message, exitCode: code }));
    else if (name === 'USAGE') {
      const helpFor = command !== undefined && HELP[command] !== undefined ? ` ${command}` : '';
      io.err(`service-pay: ${message}\nRun 'service-pay${helpFor} --help' for usage.`);
    } else io.err(`service-pay: ${message}${name === 'UNEXPECTED' || name === 'UNREACHABLE' ? '' : ` (${name})`}`);
    return code;
  }
}

function classify(error: unknown): [code: number, name: string, message: string] {
  if (error instanceof UsageError) return [EXIT.USAGE, 'USAGE', error.message];
  if (error instanceof UnsafeFileError) return [EXIT.USAGE, error.code, error.message];
  if (error instanceof UnreachableError) return [EXIT.UNREACHABLE, 'UNREACHABLE', error.message];
  if (error instanceof MissingDriverError) return [EXIT.FAILURE, error.code, error.message];
  if (error instanceof SimulatorError || error instanceof ControlApiError)
    return [EXIT.FAILURE, error.code, error.message];
  return [EXIT.FAILURE, 'UNEXPECTED', `unexpected error: ${(error as Error)?.stack ?? error}`];
}
