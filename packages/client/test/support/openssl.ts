import { execFileSync } from 'node:child_process';

// Independent reference: the openssl binary, not node:crypto, so a shared bug cannot hide in both.
function digest(args: string[], input: string | Uint8Array): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', ...args], { input });
  const hex = /([0-9a-f]{64})\s*$/.exec(out.toString('utf8').trim());
  if (hex === null) throw new Error(`unexpected openssl output: ${out.toString('utf8')}`);
  return hex[1] as string;
}

export const opensslSha256 = (input: string | Uint8Array): string => digest([], input);
export const opensslHmac = (key: string, input: string): string => digest(['-hmac', key], input);
