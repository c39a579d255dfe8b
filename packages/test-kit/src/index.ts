// The node-only helpers with no dependency of their own. Servers (`/redis`, `/postgres`, `/mariadb`), Prisma
// generation (`/prisma`) and the benchmark helpers (`/bench`) are entries of their own, so a test loads only
// the clients it uses.
export { freePort } from './free-port.js';
export { closedPort, readBody, startServer, type TestServer } from './http-server.js';
export { AppProcess, type AppProcessOptions } from './processes/app-process.js';
export { killOnExit } from './processes/kill-on-exit.js';
export { type UntilAnswersOptions, untilAnswers } from './processes/until-answers.js';
export { type RollbackGate, rollbackGate } from './rollback-gate.js';
export { TcpProxy } from './tcp-proxy.js';
export { redisTarget, type TestServers, testServers } from './test-servers.js';
export { retryUntil, sleep, testDeadline, type WaitBound, waitFor } from './wait-for.js';
