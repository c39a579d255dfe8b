import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { generateMerchant } from '../core/merchant.js';
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

/** Reads the file, or creates it (folder 0700, file 0600: these are secrets, even if only test ones). */
export async function loadDevSecrets(file: string): Promise<{ secrets: DevSecrets; path: string; created: boolean }> {
  const path = resolve(file);
  const existing = await read(path);
  if (existing !== undefined) return { secrets: existing, path, created: false };
  const { apiKey, apiSecret, webhookSecret } = generateMerchant();
  const secrets: DevSecrets = { apiKey, apiSecret, webhookSecret, createdAt: new Date().toISOString() };
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // `wx`: two commands starting at once must not each write their own keys; the loser reads the winner's.
    await writeFile(path, `${JSON.stringify(secrets, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const written = await read(path);
    if (written === undefined) throw error;
    return { secrets: written, path, created: false };
  }
  return { secrets, path, created: true };
}

async function read(path: string): Promise<DevSecrets | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
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
