import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/**
 * node:util parseArgs, strict, with its errors turned into one-line usage errors. `--help` is added to
 * every command.
 */
export function parse<T extends OptionSpec>(args: string[], options: T) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }).values as { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string } & { help?: boolean };
  } catch (error) {
    const { message, code } = error as Error & { code?: string };
    // The unknown-option message runs on with advice about positionals, which this CLI has none of.
    // Other messages keep their advice (such as writing `--clock-skew-sec=-600` for a negative value).
    throw new UsageError(code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? (message.split(/\.\s/)[0] ?? message) : message);
  }
}

export function integerFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,15}$/.test(value))
    throw new UsageError(`--${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?(?:\d+\.?\d*|\.\d+)$/.test(value))
    throw new UsageError(`--${flag} must be a number, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function requireFlag(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required (${what})`);
  return value;
}
