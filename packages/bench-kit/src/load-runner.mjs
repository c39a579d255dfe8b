// The load generator, forked by load.ts into its own process so the server's process.cpuUsage() counts only
// the server. Plain JavaScript: it runs without the TypeScript loader. argv: url, seconds, connections.
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

const require = createRequire(import.meta.url);
const setupRequest = require('./signed-request.cjs');
const [url, seconds, connections] = process.argv.slice(2);

// Well above what one core of this machine serves; anything past the pool is signed on the fly.
setupRequest.presign(Math.ceil(Number(seconds) * 60_000));
process.send({ type: 'start' });
const result = await autocannon({
  url,
  connections: Number(connections),
  duration: Number(seconds),
  requests: [{ method: 'POST', setupRequest }],
});
process.send({
  type: 'done',
  total: result.requests.total,
  average: result.requests.average,
  non2xx: result.non2xx,
  errors: result.errors,
});
process.disconnect();
