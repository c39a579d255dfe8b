import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorCore, SimulatorEvent } from '../core/simulator-core.js';

/** A dashboard opened after a long chaos run gets the latest payments, not all of them. */
const SNAPSHOT_PAYMENTS = 200;
/** Comments keep proxies and idle timers from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** A viewer this far behind is dropped; its EventSource reconnects and starts again from a snapshot. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * The dashboard's live feed (`GET /_simulator/events`, server-sent events): first a `snapshot` event
 * (the simulator, the latest payments and their deliveries), then one event per change: `payment`,
 * `delivery`, `faults`, `merchant-api-fault`. It listens to the core only while someone is watching, so
 * a test run without a dashboard pays nothing for it.
 */
export class EventStream {
  private readonly viewers = new Set<ServerResponse>();
  private unsubscribe: (() => void) | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly core: SimulatorCore,
    private readonly describe: () => unknown,
  ) {}

  open(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const payments = this.core.payments().slice(-SNAPSHOT_PAYMENTS);
    const shown = new Set(payments.map((p) => p.paymentId));
    const deliveries = this.core.deliveries().filter((d) => shown.has(d.paymentId));
    res.write(`retry: 1000\n${frame('snapshot', { simulator: this.describe(), payments, deliveries })}`);
    this.viewers.add(res);
    req.on('close', () => this.leave(res));
    if (this.unsubscribe === undefined) {
      this.unsubscribe = this.core.subscribe((event) => this.broadcast(event));
      this.heartbeat = setInterval(() => this.send(': heartbeat\n\n'), HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  /** Ends every stream (the simulator is stopping). */
  close(): void {
    for (const res of this.viewers) res.end();
    this.viewers.clear();
    this.idle();
  }

  private broadcast(event: SimulatorEvent): void {
    const { type, ...data } = event;
    this.send(frame(type, Object.values(data)[0] ?? null));
  }

  private send(text: string): void {
    for (const res of this.viewers) {
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        res.destroy();
        this.leave(res);
      } else res.write(text);
    }
  }

  private leave(res: ServerResponse): void {
    this.viewers.delete(res);
    if (this.viewers.size === 0) this.idle();
  }

  private idle(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

/** One SSE frame; JSON never holds a raw newline, so one `data:` line is enough. */
function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
