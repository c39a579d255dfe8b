import { lstat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { generateMerchant } from '../core/merchant.js';
import { readPrivateFile, writePrivateFile } from './private-files.js';
import { UsageError } from './usage-error.js';

/** Where `listen` and a standalone `trigger` keep their keys, relative to the working directory. */
export const DEFAULT_SECRETS_FILE = '.service-pay/dev-secrets.json';

/**
 * The merchant keys of local development: created on the first run, reused on every later one, so the
 * webhook secret in the app's `.env` stays valid across restarts (what `stripe listen` does with its
 * signing secret).
 */
export interface DevSecrets {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  createdAt: string;
}

/**
 * Reads the file, or creates it (folder 0700, file 0600: these are secrets, even if only test ones). A
 * symbolic link, a FIFO or another non-regular file, a hard-linked file or one owned by another user is
 * refused (`UNSAFE_FILE`); a file others can read is brought to 0600 and `warn` says so.
 *
 * @example
 * ```ts
 * const { secrets, created } = await loadDevSecrets('.service-pay/dev-secrets.json', io.err);
 * ```
 */
export async function loadDevSecrets(
  file: string,
  warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
): Promise<{ secrets: DevSecrets; path: string; created: boolean }> {
  const path = resolve(file);
  const existing = await read(path, warn);
  if (existing !== undefined) return { secrets: existing, path, created: false };
  const { apiKey, apiSecret, webhookSecret } = generateMerchant();
  const secrets: DevSecrets = { apiKey, apiSecret, webhookSecret, createdAt: new Date().toISOString() };
  try {
    // Not replacing: two commands starting at once must not each write their own keys; the loser reads the
    // winner's.
    await writePrivateFile(path, `${JSON.stringify(secrets, null, 2)}\n`, false);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // The winner's file has a second name until it removes its temporary one, a few microseconds.
    for (let turn = 0; turn < 100 && ((await lstat(path).catch(() => undefined))?.nlink ?? 1) > 1; turn++) {
      await new Promise((next) => setImmediate(next));
    }
    const written = await read(path, warn);
    if (written === undefined) throw error;
    return { secrets: written, path, created: false };
  }
  return { secrets, path, created: true };
}

async function read(path: string, warn: (message: string) => void): Promise<DevSecrets | undefined> {
  const text = await readPrivateFile(path, warn);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not valid JSON; delete it to get new dev keys`);
  }
  const s = parsed as Partial<DevSecrets> | null;
  const ok = (v: unknown) => typeof v === 'string' && v.length > 0 && !/\s/.test(v);
  if (s === null || typeof s !== 'object' || !ok(s.apiKey) || !ok(s.apiSecret) || !ok(s.webhookSecret)) {
    throw new UsageError(`${path} needs apiKey, apiSecret and webhookSecret; delete it to get new dev keys`);
  }
  return {
    apiKey: s.apiKey,
    apiSecret: s.apiSecret,
    webhookSecret: s.webhookSecret,
    createdAt: String(s.createdAt ?? ''),
  } as DevSecrets;
}
