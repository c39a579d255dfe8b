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
  if (!isPlainNumber(value)) throw new UsageError(`--${flag} must be a number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * `/^-?(?:\d+\.?\d*|\.\d+)$/` (digits with at most one dot, and at least one digit) in one pass. The
 * RegExp tried every split of a run of digits between `\d+` and `\d*`: 1.1 s on a 20,000-digit argument.
 */
export function isPlainNumber(value: string): boolean {
  let digits = 0;
  let dot = false;
  for (let i = value.startsWith('-') ? 1 : 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits++;
    else if (c === 0x2e && !dot) dot = true;
    else return false;
  }
  return digits > 0;
}

/** A URL without its trailing slashes, in one pass (`.replace(/\/+$/, '')` is quadratic in the slashes). */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}

export function requireFlag(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required (${what})`);
  return value;
}
