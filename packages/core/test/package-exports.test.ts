import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Checks the built package (run `pnpm build` first; `pnpm test` does): the export conditions pick the
// node:crypto build on Node and the Web Crypto build on Edge/Workers, and the web build needs no Node.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

/** A built file's code followed by the code of the local chunks it imports, recursively. */
function withLocalImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  const code = readFileSync(dist(file), 'utf8');
  const locals = [...code.matchAll(/(?:from|require\()\s*["']\.\/([\w.-]+)["']/g)].map((m) => m[1] as string);
  return code + locals.map((f) => withLocalImports(f, seen)).join('');
}

function resolveWith(conditions: string[], mode: 'import' | 'require'): string {
  const script =
    mode === 'import'
      ? `console.log(import.meta.resolve('@service-pay/core'))`
      : `console.log(require.resolve('@service-pay/core'))`;
  return execFileSync(
    process.execPath,
    [
      ...conditions.map((c) => `--conditions=${c}`),
      mode === 'import' ? '--input-type=module' : '--input-type=commonjs',
      '-e',
      script,
    ],
    {
      cwd: packageDir,
      encoding: 'utf8',
    },
  ).trim();
}

describe('built package', () => {
  it('has been built', () => {
    expect(existsSync(dist('index.js')), 'run `pnpm build` before the tests').toBe(true);
  });

  it.each(['web.js', 'web.cjs'])('%s uses no Node built-in module', (file) => {
    const code = withLocalImports(file);
    expect(code).not.toMatch(/["'](node:)?(crypto|buffer|fs|http)["']/);
    expect(code).toContain('crypto.subtle');
  });

  it.each(['index.js', 'index.cjs'])('%s is the node:crypto build', (file) => {
    expect(withLocalImports(file)).toMatch(/["'](node:)?crypto["']/);
  });

  it.each([
    [[], 'import', 'index.js'],
    [[], 'require', 'index.cjs'],
    [['edge-light'], 'import', 'web.js'],
    [['workerd'], 'import', 'web.js'],
    [['worker'], 'require', 'web.cjs'],
    [['deno'], 'import', 'web.js'],
  ] as const)('conditions %j with %s resolve to dist/%s', (conditions, mode, file) => {
    expect(resolveWith([...conditions], mode)).toMatch(new RegExp(`dist/${file.replace('.', '\\.')}$`));
  });

  it('the web build verifies a delivery signed by the node build', async () => {
    const node = await import(dist('index.js'));
    const web = await import(dist('web.js'));
    const event = (await import(dist('testing.js'))).samplePaymentPaidEvent();
    const { body, headers } = node.signWebhook({ event, secret: 'whsec_package_exports_s3cret' });
    const verified = await web.verifyWebhook(
      { rawBody: new TextEncoder().encode(body), headers },
      { secret: 'whsec_package_exports_s3cret' },
    );
    expect(verified.event.paymentId).toBe(event.paymentId);
  });
});
