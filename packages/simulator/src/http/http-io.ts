import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimulatorError } from '../core/errors.js';

/**
 * Reads the whole body, refusing more than `limit` bytes without keeping them. The excess is read and
 * discarded rather than cut off, so the client gets the 413 answer instead of a reset connection.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = Number(req.headers['content-length']) > limit;
    if (failed) reject(tooLarge(limit));
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(tooLarge(limit));
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    // A client that goes away mid-body must not leave the handler waiting forever.
    req.on('close', () => {
      if (!req.complete) reject(new Error('The client closed the connection before the body was complete.'));
    });
  });
}

function tooLarge(limit: number): SimulatorError {
  return new SimulatorError('BODY_TOO_LARGE', `The body is over the ${limit}-byte limit.`);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** Spec section 7: `{"error": CODE, "message": "..."}` with the code's status. */
export function sendError(res: ServerResponse, error: SimulatorError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, { error: error.code, message: error.message }, headers);
}

/** Parses a JSON body; an empty body is `undefined`. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new SimulatorError('INVALID_JSON', 'The body is not valid JSON.');
  }
}
