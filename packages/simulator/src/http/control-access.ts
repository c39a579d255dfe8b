import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { SimulatorError } from '../core/errors.js';

/** The header that carries the control token (`Authorization: Bearer <token>` works too). */
export const CONTROL_TOKEN_HEADER = 'x-simulator-token';

/** True for the names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return name === 'localhost' || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));
}

/**
 * Who may use the dashboard, its live feed and the control API. Two checks, each for its own attack:
 *
 * - **Host.** A page on another site can point its own DNS name at 127.0.0.1 (DNS rebinding): the
 *   browser then calls this server as that site, same-origin, and the Origin check alone passes. Such a
 *   request still names the attacker's host in `Host`, so only loopback names, IP addresses and the bound
 *   host, on the bound port, are served.
 * - **Token.** Every state-changing call needs the per-run control token (printed in the banner, handed to
 *   the dashboard inside its own page, written for the CLI in `.service-pay/simulator.json`). Bound to a
 *   non-loopback address, reads need it too: anyone on the network could otherwise list the payments.
 *
 * @example
 * ```ts
 * const access = new ControlAccess(sim.controlToken, '127.0.0.1');
 * access.checkHost(req, port); // throws FORBIDDEN_HOST
 * access.checkToken(req, query); // throws CONTROL_TOKEN_REQUIRED
 * ```
 */
export class ControlAccess {
  readonly loopbackOnly: boolean;
  readonly #token: Buffer;

  constructor(
    readonly token: string,
    private readonly boundHost: string,
  ) {
    this.#token = Buffer.from(token);
    this.loopbackOnly = isLoopbackHost(boundHost);
  }

  /** The Host check, for every dashboard and control request. */
  checkHost(req: IncomingMessage, port: number): void {
    const host = req.headers.host ?? '';
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
    const name = (match?.[1] ?? '').toLowerCase();
    const bare = name.startsWith('[') ? name.slice(1, -1) : name;
    const allowed =
      match !== null &&
      match[2] === String(port) &&
      (name === 'localhost' || isIP(bare) !== 0 || name === this.boundHost.toLowerCase());
    if (!allowed) {
      throw new SimulatorError(
        'FORBIDDEN_HOST',
        `The simulator answers only requests addressed to localhost, an IP address or ${this.boundHost}, on port ${port}; this one was for ${JSON.stringify(host.slice(0, 100))}.`,
      );
    }
  }

  /**
   * The token check: for state-changing methods always, for reads when bound beyond loopback. The live
   * feed (an EventSource cannot send headers) may carry it as `?token=`.
   */
  checkToken(req: IncomingMessage, query: URLSearchParams): void {
    const method = req.method ?? '';
    const reading = method === 'GET' || method === 'HEAD';
    if (reading && this.loopbackOnly) return;
    const header = req.headers[CONTROL_TOKEN_HEADER];
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const given = (typeof header === 'string' ? header : undefined) ?? bearer ?? (reading ? query.get('token') : null);
    if (given === null || given === undefined || !this.#matches(given)) {
      throw new SimulatorError(
        'CONTROL_TOKEN_REQUIRED',
        `${given ? 'Wrong' : 'No'} control token: send the one the simulator printed at start (sim.controlToken; ` +
          `the CLI reads .service-pay/simulator.json) in the ${CONTROL_TOKEN_HEADER} header.`,
      );
    }
  }

  #matches(given: string): boolean {
    const bytes = Buffer.from(given);
    return bytes.length === this.#token.length && timingSafeEqual(bytes, this.#token);
  }
}
