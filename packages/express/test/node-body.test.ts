import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { signWebhook } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET, createCreditRecorder, samplePaymentPaidEvent } from '@service-pay/core/testing';
import { testDeadline, waitFor } from '@service-pay/test-kit';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// Edges of the shared Node body reading (@service-pay/core/node), seen through the Express middleware.
describe('reading the Node request body', () => {
  const recorder = createCreditRecorder();
  const errors: string[] = [];
  const disconnects: Array<Record<string, unknown>> = [];
  const logger = {
    debug: (fields: Record<string, unknown>) => {
      if (fields.code === 'CLIENT_DISCONNECTED') disconnects.push(fields);
    },
    warn: () => {},
    error: (_fields: unknown, message: string) => errors.push(message),
  };
  const options = { secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid, logger };
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const app = express();
    // Middleware that switched the stream to strings: the bytes are re-encoded exactly (UTF-8 in, UTF-8 out).
    app.post(
      '/utf8',
      (req, _res, next) => {
        req.setEncoding('utf8');
        next();
      },
      serviceWebhook(options),
    );
    // Middleware that started reading the stream itself: what is left can't be verified.
    app.post(
      '/half-read',
      (req, _res, next) => {
        req.once('data', () => next());
      },
      serviceWebhook(options),
    );
    app.post('/hooks', serviceWebhook(options));
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const signed = (event = samplePaymentPaidEvent({ orderNo: 'order_ünïcødé_€' })) => ({
    event,
    ...signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET }),
  });

  it('verifies a body read as UTF-8 strings (req.setEncoding)', async () => {
    const { event, body, headers } = signed();
    const res = await fetch(`${url}/utf8`, { method: 'POST', headers, body });
    expect(res.status).toBe(200);
    expect(recorder.credits(event.paymentId)).toBe(1);
  });

  it('answers RAW_BODY_UNAVAILABLE at once when another reader took part of the stream', async () => {
    const { event, body, headers } = signed();
    const res = await fetch(`${url}/half-read`, { method: 'POST', headers, body });
    expect(res.status).toBe(500);
    expect((await res.json()).error).toBe('RAW_BODY_UNAVAILABLE');
    expect(recorder.credits(event.paymentId)).toBe(0);
  });

  it('gives up on a client that disconnects mid-body instead of waiting for the rest (logged at debug, not error)', async ({
    task,
  }) => {
    const { body, headers } = signed();
    const before = disconnects.length;
    const errorsBefore = errors.length;
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    const head = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST /hooks HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n${body.slice(0, 40)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await waitFor(
      'the disconnect to be logged',
      () => disconnects.length > before,
      { deadline: testDeadline(task) },
      20,
    );
    expect(disconnects.length).toBeGreaterThan(before);
    expect(errors.length).toBe(errorsBefore);
  });
});
