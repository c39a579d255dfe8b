import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulatorError } from '../core/errors.js';
import type { SimulatorCore } from '../core/simulator-core.js';
import { ControlAccess } from './control-access.js';
import { describeSimulator, handleControlApi } from './control-api.js';
import { isDashboardPath, serveDashboard } from './dashboard.js';
import { EventStream } from './event-stream.js';
import { sendError } from './http-io.js';
import { handleMerchantApi } from './merchant-api.js';

/**
 * The simulator's one `node:http` server: the dashboard at `/`, its live feed and the control API under
 * `/_simulator`, the merchant API under `/v1`. Routes only; the work is the core's.
 */
export class SimulatorServer {
  url = '';
  port = 0;
  private readonly server: Server;
  private readonly events: EventStream;

  readonly access: ControlAccess;

  constructor(private readonly core: SimulatorCore) {
    this.access = new ControlAccess(core.o.controlToken, core.o.host);
    this.events = new EventStream(core, () => describeSimulator(core, this.url));
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
  }

  async listen(port: number, host: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        reject(
          error.code === 'EADDRINUSE'
            ? new SimulatorError('PORT_IN_USE', `Port ${port} on ${host} is in use; pick another or use port 0.`)
            : new SimulatorError('INVALID_OPTIONS', `Cannot listen on ${host}:${port}: ${error.message}`, {
                cause: error,
              }),
        );
      };
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${urlHost(host)}:${this.port}`;
  }

  async close(): Promise<void> {
    this.events.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      const path = q === -1 ? target : target.slice(0, q);
      const query = new URLSearchParams(q === -1 ? '' : target.slice(q + 1));
      if (path.startsWith('/v1/')) await handleMerchantApi(this.core, req, res, path);
      else if (path === '/_simulator' || path.startsWith('/_simulator/')) {
        this.access.checkHost(req, this.port);
        assertSameOrigin(req);
        this.access.checkToken(req, query);
        if (path === '/_simulator/events') {
          if (req.method !== 'GET') throw new SimulatorError('METHOD_NOT_ALLOWED', `${path} accepts GET.`);
          this.events.open(req, res);
        } else await handleControlApi(this.core, this.url, req, res, path, query);
      } else if (isDashboardPath(path)) {
        this.access.checkHost(req, this.port);
        // On loopback the page carries the token (only this machine can fetch it, the Host check keeps
        // rebound pages out); beyond it, the page gets it from the banner's URL (#token=...).
        await serveDashboard(req.method ?? '', path, res, this.access.loopbackOnly ? this.access.token : undefined);
      } else
        throw new SimulatorError(
          'NOT_FOUND',
          `No route ${req.method} ${path}; the dashboard is at /, the merchant API under /v1, the control API under /_simulator.`,
        );
    } catch (error) {
      if (error instanceof SimulatorError) sendError(res, error);
      else if (!res.headersSent && !req.destroyed) {
        sendError(
          res,
          new SimulatorError(
            'INTERNAL_ERROR',
            `Unexpected error in the simulator: ${(error as Error)?.message ?? error}`,
          ),
        );
      }
    }
  }
}

/**
 * The control API has no authentication, so a page on another site must not drive it from the
 * developer's browser: a browser names the page's origin on every request that changes something, and
 * it must be this server. curl, the CLI and tests send no Origin and pass.
 */
function assertSameOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined || req.method === 'GET' || req.method === 'HEAD') return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host !== req.headers.host) {
    throw new SimulatorError(
      'FORBIDDEN_ORIGIN',
      `The control API only takes changes from its own dashboard, not from a page at ${origin}.`,
    );
  }
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
