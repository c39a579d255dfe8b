// `pnpm bench [--node PATH] [suite...]`: the benchmarks on the node named by `--node` or `BENCH_NODE` (for a
// supported line, `node scripts/node-lines.mjs bin 24` prints its path), else on the node running this.
// Every ratio compares contestants in one process, so a run says nothing about another line's speed: run
// it again with that line's node.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--node');
const node = at === -1 ? process.env.BENCH_NODE || process.execPath : args.splice(at, 2)[1];
if (!node) {
  console.error('usage: pnpm bench [--node PATH] [suite...]');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const { status, error } = spawnSync(node, ['--expose-gc', '--import', 'tsx', join(here, 'run-all.ts'), ...args], {
  stdio: 'inherit',
  cwd: join(here, '..'),
});
if (error) throw error;
process.exit(status ?? 1);
