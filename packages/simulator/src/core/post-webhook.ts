import { type Agent, type ClientRequest, request as httpRequest } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface PostResult {
  /** Set when a complete answer arrived in time. */
  status: number | null;
  responseBody: string;
  /** `down`: nothing was sent (an injected endpoint outage). */
  error: { kind: 'timeout' | 'network' | 'down'; message: string } | null;
  startedAt: number;
  latencyMs: number;
}

export interface PostHandle {
  result: Promise<PostResult>;
  /** Stops the request at once (simulator shutdown); the result resolves as a network error. */
  abort(): void;
}

/** Enough of an answer to show in the log; the rest is read and discarded so the socket can be reused. */
const KEEP_BODY_CHARS = 512;

/**
 * One webhook POST over node:http: no fetch, no framework, so thousands of deliveries stay cheap. The
 * timeout covers everything from getting a connection to the last byte of the answer: a receiver that
 * sends headers and then stalls has not answered.
 */
export function postWebhook(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  agents: { http: Agent; https: HttpsAgent },
): PostHandle {
  let settle!: (r: PostResult) => void;
  const result = new Promise<PostResult>((resolve) => {
    settle = resolve;
  });
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The clock starts when a socket is assigned, not when the request is queued in the agent: the
  // receiver cannot be blamed for our own connection limit.
  let startedAt = Date.now();
  let started = performance.now();
  const finish = (partial: Omit<PostResult, 'startedAt' | 'latencyMs'>) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    settle({ ...partial, startedAt, latencyMs: Math.round(performance.now() - started) });
  };

  const isHttps = url.protocol === 'https:';
  const send = isHttps ? httpsRequest : httpRequest;
  let req: ClientRequest | undefined;
  let resent = false;
  let answered = false;

  const open = (agent: Agent | HttpsAgent | false): void => {
    let current: ClientRequest;
    try {
      current = send(url, {
        method: 'POST',
        headers: {
          ...headers,
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'service-pay-simulator',
        },
        agent,
      });
    } catch (error) {
      finish({ status: null, responseBody: '', error: { kind: 'network', message: messageOf(error) } });
      return;
    }
    req = current;
    current.once('socket', () => {
      // A request sent again on a new socket stays on the attempt's first clock.
      if (timer !== undefined) return;
      startedAt = Date.now();
      started = performance.now();
      timer = setTimeout(() => {
        finish({
          status: null,
          responseBody: '',
          error: { kind: 'timeout', message: `no complete answer within ${timeoutMs} ms` },
        });
        req?.destroy();
      }, timeoutMs);
    });
    current.on('error', (error) => {
      // A kept-alive socket that the receiver closed for idleness just as this request was written on it
      // is reset before the receiver read a byte of it: the receiver did not refuse anything, the socket
      // was stale. Clients send such a request again on a new socket (node's own docs show the pattern);
      // once, within the same attempt and its timeout. A receiver that did read it dedupes the repeat, as
      // it must any redelivery.
      if (!resent && !answered && !done && current.reusedSocket && isStaleSocketError(error)) {
        resent = true;
        open(false);
        return;
      }
      finish({ status: null, responseBody: '', error: { kind: 'network', message: messageOf(error) } });
    });
    current.on('response', (res) => {
      answered = true;
      let kept = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (kept.length < KEEP_BODY_CHARS) kept += chunk.slice(0, KEEP_BODY_CHARS - kept.length);
      });
      res.on('end', () => finish({ status: res.statusCode ?? 0, responseBody: kept, error: null }));
      res.on('error', (error) =>
        finish({ status: null, responseBody: kept, error: { kind: 'network', message: messageOf(error) } }),
      );
      res.on('close', () => {
        if (!res.complete) {
          finish({
            status: null,
            responseBody: kept,
            error: { kind: 'network', message: 'the connection closed before the answer was complete' },
          });
        }
      });
    });
    current.end(body);
  };
  open(isHttps ? agents.https : agents.http);

  return {
    result,
    abort: () => {
      finish({
        status: null,
        responseBody: '',
        error: { kind: 'network', message: 'cancelled: the simulator stopped' },
      });
      req?.destroy();
    },
  };
}

/** How a socket the peer closed meets a request written on it: reset, or ended before any answer. */
function isStaleSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
