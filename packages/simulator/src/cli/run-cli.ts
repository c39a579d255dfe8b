import { createRequire } from 'node:module';
import { SimulatorError } from '../errors.js';
import type { Io } from './io.js';
import { SEND_HELP, sendCommand } from './send-command.js';
import { SIGN_HELP, signCommand } from './sign-command.js';
import { SIMULATE_HELP, simulateCommand } from './simulate-command.js';
import { EXIT, UsageError } from './usage-error.js';

export const MAIN_HELP = `Usage: service-pay <command> [options]

Commands:
  simulate     run the payment service locally (merchant API, webhooks, control API)
  send         sign payment.paid deliveries and POST them to your endpoint
  sign         print the signed headers and a curl command (webhook, or 'sign api')
  help [cmd]   show help

Options:
  -h, --help     show help (also after any command)
  -v, --version  print the version

Exit codes: 0 done, 1 the work failed, 2 bad usage.`;

const HELP: Record<string, string> = { simulate: SIMULATE_HELP, send: SEND_HELP, sign: SIGN_HELP };

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
  try {
    switch (command) {
      case 'simulate':
        return await simulateCommand(rest, io, stopSignal);
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
    if (error instanceof UsageError) {
      const helpFor = command !== undefined && HELP[command] !== undefined ? ` ${command}` : '';
      io.err(`service-pay: ${error.message}\nRun 'service-pay${helpFor} --help' for usage.`);
      return EXIT.USAGE;
    }
    if (error instanceof SimulatorError) {
      io.err(`service-pay: ${error.message} (${error.code})`);
      return EXIT.FAILURE;
    }
    io.err(`service-pay: unexpected error: ${(error as Error)?.stack ?? error}`);
    return EXIT.FAILURE;
  }
}
