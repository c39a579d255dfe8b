import { readFileSync } from 'node:fs';
import type { Io } from './io.js';
import { UsageError } from './usage-error.js';

/** Where a command may take one secret from, and what to call it in messages. */
export interface SecretSource {
  /** The flag's name without dashes, such as `secret`; its file variant is `<flag>-file`. */
  flag: string;
  /** The environment variable read when neither flag is given, such as `SERVICE_WEBHOOK_SECRET`. */
  env: string;
  /** What the secret is, for the "is required" message. */
  what: string;
}

/**
 * A secret from `--<flag>-file FILE` (one trailing newline dropped), the environment variable, or
 * `--<flag>` on the command line. The last still works, with a warning: other users of the machine see
 * a process's arguments (`ps`), and shells keep them in their history.
 *
 * @example
 * ```ts
 * const secret = readSecret(io, values.secret, values['secret-file'], {
 *   flag: 'secret', env: 'SERVICE_WEBHOOK_SECRET', what: "the merchant's webhook secret",
 * });
 * ```
 */
export function readSecret(
  io: Io,
  fromFlag: string | undefined,
  fromFile: string | undefined,
  source: SecretSource,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const secret = readOptionalSecret(io, fromFlag, fromFile, source, env);
  if (secret !== undefined) return secret;
  throw new UsageError(
    `${source.what} is required: set ${source.env}, or pass --${source.flag}-file FILE (or --${source.flag})`,
  );
}

/**
 * `readSecret` for a command that makes its own secret when given none (`simulate`): the same sources,
 * the same warning, and `undefined` instead of an error when none is set.
 *
 * @example
 * ```ts
 * const webhookSecret = readOptionalSecret(io, values['webhook-secret'], values['webhook-secret-file'], WEBHOOK_SECRET_OF_SIMULATE);
 * ```
 */
export function readOptionalSecret(
  io: Io,
  fromFlag: string | undefined,
  fromFile: string | undefined,
  source: SecretSource,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (fromFlag !== undefined && fromFile !== undefined)
    throw new UsageError(`give --${source.flag} or --${source.flag}-file, not both`);
  if (fromFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(fromFile, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --${source.flag}-file ${fromFile}: ${(error as Error).message}`);
    }
    const secret = text.replace(/\r?\n$/, '');
    if (secret === '') throw new UsageError(`--${source.flag}-file ${fromFile} is empty`);
    return secret;
  }
  if (fromFlag !== undefined && fromFlag !== '') {
    io.err(
      `warning: --${source.flag} on the command line is visible to other users (ps) and kept in shell history; ` +
        `prefer ${source.env}=... or --${source.flag}-file FILE`,
    );
    return fromFlag;
  }
  const fromEnv = env[source.env];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
}

/** The webhook secret of `send` and `sign`. */
export const WEBHOOK_SECRET: SecretSource = {
  flag: 'secret',
  env: 'SERVICE_WEBHOOK_SECRET',
  what: "the merchant's webhook secret",
};

/** The API secret of `sign api`. */
export const API_SECRET: SecretSource = {
  flag: 'api-secret',
  env: 'SERVICE_API_SECRET',
  what: "the merchant's API secret",
};

/** The webhook secret `simulate` signs with: the environment variable the merchant's app reads too. */
export const WEBHOOK_SECRET_OF_SIMULATE: SecretSource = {
  flag: 'webhook-secret',
  env: 'SERVICE_WEBHOOK_SECRET',
  what: "the merchant's webhook secret",
};
