import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, createWebhookHandler, MemoryDedupeStore, WebhookError } from '../src/index.js';

const secret = 'whsec_test_secret_0123456789';
const onPaymentPaid = () => {};

function refusal(make: () => unknown): WebhookError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return error as WebhookError;
  }
  throw new Error('expected the options to be refused');
}

describe('an option that is not one', () => {
  it('is refused at construction with the nearest known name', () => {
    const store = new MemoryDedupeStore();
    const cases: [Record<string, unknown>, string][] = [
      [{ secret, onPaymentPaid, stor: store }, 'options.stor is not an option: did you mean `store`?'],
      [
        { secret, onPaymentPayed: onPaymentPaid },
        'options.onPaymentPayed is not an option: did you mean `onPaymentPaid`?',
      ],
      [{ secret, onPaymentPaid, leaseMS: 5000 }, 'options.leaseMS is not an option: did you mean `leaseMs`?'],
      [{ secrets: secret, onPaymentPaid }, 'options.secrets is not an option: did you mean `secret`?'],
      [
        { secret, onPaymentPaid, handlerTimeout: 10 },
        'options.handlerTimeout is not an option: did you mean `handlerTimeoutMs`?',
      ],
    ];
    for (const [options, message] of cases) {
      // biome-ignore lint/suspicious/noExplicitAny: plain JavaScript, where nothing checks the keys
      const error = refusal(() => createWebhookHandler(options as any));
      expect([error.code, error.message]).toEqual(['INVALID_OPTIONS', message]);
    }
  });

  it('far from every option, lists them all', () => {
    // biome-ignore lint/suspicious/noExplicitAny: plain JavaScript
    const error = refusal(() => createFetchHandler({ secret, onPaymentPaid, colour: 'blue' } as any));
    expect(error.message).toMatch(/^options\.colour is not an option\. The options are: secret, .*onPaymentPaid/);
  });

  it('every real option is accepted', () => {
    const handler = createWebhookHandler({
      secret,
      toleranceSec: 300,
      now: () => Date.now(),
      store: new MemoryDedupeStore(),
      leaseMs: 10_000,
      handlerTimeoutMs: 30_000,
      storeTimeoutMs: 2_000,
      retainMs: 60_000,
      logger: console,
      onOutcome: () => {},
      onPaymentPaid,
      dedupeKey: (event) => event.paymentId,
      maxBodyBytes: 1024,
      bodyTimeoutMs: 1000,
    });
    expect(typeof handler).toBe('function');
  });

  it('in TypeScript, a misspelt onPaymentPaid names the option, not the store', () => {
    const file = fileURLToPath(new URL('./types/misspelt-option.ts', import.meta.url));
    // The type test without its @ts-expect-error: the diagnostic it would have had.
    const source = readFileSync(file, 'utf8').replace(/^\s*\/\/ @ts-expect-error.*$/m, '');
    const config = ts.getParsedCommandLineOfConfigFile(
      fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    if (config === undefined) throw new Error('no tsconfig');
    const host = ts.createCompilerHost(config.options);
    const readFile = host.readFile;
    host.readFile = (name) => (name === file ? source : readFile(name));
    const program = ts.createProgram([file], config.options, host);
    const messages = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("'onPaymentPayed' does not exist");
    expect(messages[0]).toContain("Did you mean to write 'onPaymentPaid'?");
    expect(messages.join('\n')).not.toContain('is missing the following properties');
  }, 60_000); // a whole tsc program: seconds, more on a loaded machine
});

describe('the memory store', () => {
  // A fresh process each: the notice is once per process. The built package, as an app imports it.
  const packageDir = fileURLToPath(new URL('..', import.meta.url));
  const script = `
    import { createWebhookHandler, MemoryDedupeStore } from '@service-pay/core';
    const logger = { warn: (f, m) => console.log('warn', f.code ?? '', m), error: (f, m) => console.log('error', f.code ?? '', m) };
    createWebhookHandler({ secret: 'whsec_test_secret_0123456789', onPaymentPaid: () => {}, logger });
    createWebhookHandler({ secret: 'whsec_test_secret_0123456789', onPaymentPaid: () => {}, logger });
    new MemoryDedupeStore({ logger });`;
  const run = (env: NodeJS.ProcessEnv) =>
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageDir,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });

  it('says once, at start, that it is for one process and development', () => {
    const lines = run({ NODE_ENV: 'development' }).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[service-pay\] MemoryDedupeStore .*for one process, in development/);
  });

  it('under NODE_ENV=production, an error on the logger, once', () => {
    const lines = run({ NODE_ENV: 'production' }).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error MEMORY_STORE_IN_PRODUCTION NODE_ENV=production .*a redelivery credits again/);
  });
});
