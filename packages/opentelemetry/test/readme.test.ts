import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { freePort } from '@service-pay/test-kit';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const preload = fileURLToPath(new URL('./support/register-otel.mjs', import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function readme() {
  const text = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  return [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
}

describe('README', () => {
  it('opens with the install command, then a quick start of at most 10 lines', async () => {
    const blocks = await readme();
    // The command, then (until the first publish) a comment on where the package comes from today.
    expect(blocks[0]?.[2]?.trim().replace(/\s+#.*$/, '')).toBe(
      'npm install @service-pay/opentelemetry @opentelemetry/api',
    );
    expect(blocks[1]?.[1]).toBe('ts');
    expect(blocks[1]?.[2]?.trim().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('runs the quick start as written: a real delivery is counted and spanned through the global providers', async () => {
    const code = (await readme())[1]?.[2] ?? '';
    // TypeScript as written, only its types stripped.
    const js = ts.transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const port = await freePort();
    const secret = 'whsec_readme_0123456789';
    const child = spawn(process.execPath, ['--import', preload, '--input-type=module', '-e', js], {
      cwd: packageDir,
      env: { ...process.env, SERVICE_WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret });
    let status = 0;
    for (let i = 0; status === 0; i++) {
      try {
        status = (await fetch(`http://127.0.0.1:${port}/webhooks/service`, { method: 'POST', headers, body })).status;
      } catch {
        if (i > 200 || child.exitCode !== null) throw new Error(`the quick start did not listen:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(status).toBe(200);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
    expect(output).toContain(`credit ${event.orderNo} ${event.amount}`);
    const recorded = JSON.parse(output.trim().split('\n').at(-1) as string) as {
      metrics: Array<{ name: string; unit: string; points: Array<Record<string, unknown>> }>;
      spans: Array<{ name: string; attributes: Record<string, unknown> }>;
    };
    expect(recorded.metrics.find((m) => m.name === 'service_pay.deliveries')).toEqual({
      name: 'service_pay.deliveries',
      unit: '{delivery}',
      points: [{ 'service_pay.outcome': 'credited', 'service_pay.source': 'webhook' }],
    });
    expect(recorded.metrics.map((m) => m.name).sort()).toEqual([
      'service_pay.deliveries',
      'service_pay.delivery.duration',
      'service_pay.handler.duration',
    ]);
    expect(recorded.spans).toEqual([
      expect.objectContaining({
        name: 'service_pay.delivery',
        attributes: expect.objectContaining({ 'service_pay.payment_id': event.paymentId }),
      }),
    ]);
  });
});
