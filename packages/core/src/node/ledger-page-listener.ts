import type { IncomingMessage, ServerResponse } from 'node:http';
import { createLedgerPage, type LedgerPageOptions } from '../ledger/ledger-page.js';

/** The most a page's form may be: its fields are an action, a payment id and a token. */
const MAX_FORM_BYTES = 4_096;

/**
 * The operator page (`createLedgerPage`) as a Node listener, for the Node adapters (Express, Fastify,
 * NestJS): the request becomes a fetch `Request` (its URL from `originalUrl` where a router mounted it; a
 * form body a framework already parsed is encoded again), the `Response` is written back.
 *
 * @example
 * ```ts
 * app.use('/ops/payments', ledgerPageListener({ store, reconciler, authorize: (req) => isAdmin(req) }));
 * ```
 */
export function ledgerPageListener(
  options: LedgerPageOptions,
): (
  req: IncomingMessage & { body?: unknown; originalUrl?: string },
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void {
  const page = createLedgerPage(options);
  return (req, res, next) => {
    void (async () => {
      const request = await toRequest(req);
      const response = await page(request);
      if (res.destroyed) return;
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      if (next !== undefined) next(error);
      else if (!res.headersSent) res.writeHead(500).end();
    });
  };
}

async function toRequest(req: IncomingMessage & { body?: unknown; originalUrl?: string }): Promise<Request> {
  const host = req.headers.host ?? 'localhost';
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${secure ? 'https' : 'http'}://${host}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  let body: string;
  if (req.body !== undefined && req.body !== null && typeof req.body === 'object' && !Buffer.isBuffer(req.body)) {
    body = new URLSearchParams(req.body as Record<string, string>).toString();
  } else if (typeof req.body === 'string' || Buffer.isBuffer(req.body)) {
    body = String(req.body);
  } else {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_FORM_BYTES) break;
      chunks.push(chunk as Buffer);
    }
    body = Buffer.concat(chunks).toString('utf8');
  }
  return new Request(url, { method, headers, body });
}
