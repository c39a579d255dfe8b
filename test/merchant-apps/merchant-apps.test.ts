import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `pnpm check:merchant-apps`: every client, as its README sets it up, in one fresh app from the tarballs;
 * each mistake (a credit through the app's own client, an un-awaited ctx.tx write, an own transaction, an
 * empty database) sent as a first attempt and a retry, credits counted in a table without a unique
 * constraint. The script exits 1 on a double or lost credit, a wrong store name or a crash; its table is
 * printed here, so the run's log shows what each client answered.
 */
it('fresh merchant apps from the tarballs: every mistake refused or credited once, on every client', async () => {
  const child = spawn(process.execPath, ['scripts/merchant-apps/check.mjs'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  console.log(output);
  expect(code, output.slice(-4000)).toBe(0);
});
