import { connect, createServer, type Server, type Socket } from 'node:net';

/** Which wire protocol the proxy reads, to count the statements the server answers. */
export type WireProtocol = 'postgres' | 'mysql';

/**
 * A TCP proxy in front of a database server that counts round trips as the server sees them, for tests:
 * on PostgreSQL every ReadyForQuery the server sends (one per simple query or per Sync of the extended
 * protocol: the points where a client must wait for the server), on MySQL/MariaDB every command that gets
 * a statement (COM_QUERY, COM_STMT_EXECUTE; a prepare travels with its execute, a pool's ping is no statement). Counts are across every connection.
 *
 * @example
 * ```ts
 * const proxy = await startRoundTripProxy('postgres', 5432);
 * const before = proxy.count;
 * await pool.query('select 1'); // through `postgres://...@127.0.0.1:${proxy.port}/test`
 * proxy.count - before; // 1
 * ```
 */
export interface RoundTripProxy {
  readonly port: number;
  /** Round trips seen so far. */
  readonly count: number;
  /**
   * Connections inside a transaction: on PostgreSQL by the status of each one's last ReadyForQuery, on
   * MySQL by its client's last transaction statement (`BEGIN`/`START TRANSACTION`, then `COMMIT` or
   * `ROLLBACK`, as COM_QUERY text). A store may answer a delivery before the ROLLBACK of a transaction that
   * changed nothing: a count that must include that ROLLBACK waits for this to be 0.
   */
  readonly inTransaction: number;
  close(): Promise<void>;
}

/** ReadyForQuery's status outside a transaction ('I'; 'T' inside one, 'E' inside a failed one). */
const IDLE = 0x49;
const SSL_REQUEST = 80_877_103;
const GSS_REQUEST = 80_877_104;
/**
 * MySQL commands that run statements, one round trip each: COM_QUERY, COM_STMT_EXECUTE, COM_STMT_RESET.
 * Not counted: COM_STMT_PREPARE (the clients that prepare, the mariadb connector under Prisma, send it
 * with its EXECUTE without waiting), COM_STMT_CLOSE (no answer at all) and COM_PING (a pool checking a
 * connection before lending it, whatever runs on it next).
 */
const ANSWERED = new Set([0x03, 0x17, 0x1a]);

/** Starts the proxy on a free loopback port, forwarding to `127.0.0.1:targetPort`. */
export async function startRoundTripProxy(protocol: WireProtocol, targetPort: number): Promise<RoundTripProxy> {
  let count = 0;
  /** The connections inside a transaction (see `RoundTripProxy.inTransaction`). */
  const inTransaction = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const count1 = () => {
      count++;
    };
    if (protocol === 'postgres') {
      const reader = postgresReader((status) => {
        count1();
        if (status === IDLE) inTransaction.delete(client);
        else inTransaction.add(client);
      });
      client.on('data', (chunk: Buffer) => reader.fromClient(chunk));
      upstream.on('data', (chunk: Buffer) => reader.fromServer(chunk));
    } else {
      client.on(
        'data',
        mysqlReader(count1, (open) => {
          if (open) inTransaction.add(client);
          else inTransaction.delete(client);
        }),
      );
    }
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      inTransaction.delete(client);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    get count() {
      return count;
    },
    get inTransaction() {
      return inTransaction.size;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * PostgreSQL's framing: the client's first messages (startup, SSL or GSS requests) carry no type byte, and
 * the server answers an SSL or GSS request with one byte; everything else is a type byte and a length.
 */
function postgresReader(onReady: (status: number) => void) {
  let clientBuffer = Buffer.alloc(0);
  let serverBuffer = Buffer.alloc(0);
  let started = false;
  let singleByteAnswers = 0;
  return {
    fromClient(chunk: Buffer) {
      if (started) return;
      clientBuffer = Buffer.concat([clientBuffer, chunk]);
      while (!started && clientBuffer.length >= 8) {
        const length = clientBuffer.readInt32BE(0);
        if (clientBuffer.length < length) return;
        const code = clientBuffer.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSS_REQUEST) singleByteAnswers++;
        else started = true;
        clientBuffer = clientBuffer.subarray(length);
      }
    },
    fromServer(chunk: Buffer) {
      serverBuffer = Buffer.concat([serverBuffer, chunk]);
      while (singleByteAnswers > 0 && serverBuffer.length > 0) {
        singleByteAnswers--;
        serverBuffer = serverBuffer.subarray(1);
      }
      while (serverBuffer.length >= 5) {
        const length = serverBuffer.readInt32BE(1);
        if (serverBuffer.length < 1 + length) return;
        if (serverBuffer[0] === 0x5a) onReady(serverBuffer[5] as number); // 'Z': ReadyForQuery, its status
        serverBuffer = serverBuffer.subarray(1 + length);
      }
    },
  };
}

/** MySQL's framing: 3 bytes of length, a sequence number (0 starts a command), then the payload. */
function mysqlReader(onCommand: () => void, onTransaction: (open: boolean) => void) {
  let buffer = Buffer.alloc(0);
  let handshakeDone = false;
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 4) {
      const length = buffer.readUIntLE(0, 3);
      if (buffer.length < 4 + length) return;
      const sequence = buffer[3];
      // The client's first packet (the handshake response) has sequence 1; commands start at 0 after it.
      if (sequence !== 0) handshakeDone = true;
      else if (handshakeDone && ANSWERED.has(buffer[4] as number)) {
        onCommand();
        // COM_QUERY's text: a transaction opened or ended (ROLLBACK TO SAVEPOINT ends none).
        if (buffer[4] === 0x03) {
          const text = buffer.subarray(5, Math.min(4 + length, 45)).toString('latin1');
          if (/^\s*(?:begin|start\s+transaction)\b/i.test(text)) onTransaction(true);
          else if (/^\s*(?:commit|rollback)\b(?!\s+(?:work\s+)?to\b)/i.test(text)) onTransaction(false);
        }
      }
      buffer = buffer.subarray(4 + length);
    }
  };
}

/** Each protocol's server port when its URL names none. */
const DEFAULT_PORTS: Record<WireProtocol, number> = { postgres: 5432, mysql: 3306 };

/**
 * Starts a round-trip proxy in front of the server the URL in `process.env[variable]` names (`fallback`
 * when unset), and points that variable at the proxy: clients that read it when their modules load (import
 * them after this) connect through it.
 *
 * @example
 * ```ts
 * const proxy = await proxyServerOf('postgres', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/test');
 * const { SERVER_CLIENTS } = await import('./clients/index.js');
 * ```
 */
export async function proxyServerOf(
  protocol: WireProtocol,
  variable: string,
  fallback: string,
): Promise<RoundTripProxy> {
  const target = new URL(process.env[variable] ?? fallback);
  const proxy = await startRoundTripProxy(protocol, Number(target.port || DEFAULT_PORTS[protocol]));
  target.port = String(proxy.port);
  process.env[variable] = target.toString();
  return proxy;
}
