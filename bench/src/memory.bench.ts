import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TargetCheck } from './harness.js';

const KEYS = 1_000_000;
const LIMIT = 150;

/**
 * Heap bytes per completed key in MemoryDedupeStore, measured in a child process of its own so nothing
 * else in this run shares the heap. Keys, fingerprints and tokens are real-sized.
 */
export async function run(): Promise<TargetCheck[]> {
  const bytesPerKey = await new Promise<number>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./memory-child.ts', import.meta.url)), [String(KEYS)], {
      execArgv: ['--expose-gc', '--max-old-space-size=4096', '--import', 'tsx'],
    });
    child.on('message', (m) => resolve(Number(m)));
    child.on('error', reject);
    child.on('exit', (code) => code !== 0 && reject(new Error(`memory child exited ${code}`)));
  });
  const met = bytesPerKey <= LIMIT;
  console.log('\n## MemoryDedupeStore heap per completed key');
  console.log(
    `  ${KEYS.toLocaleString('en-US')} completed keys: ${bytesPerKey.toFixed(1)} bytes/key (<= ${LIMIT}) ${met ? 'MET' : 'MISSED'}`,
  );
  return [{ of: 'bytes per key', over: '', atLeast: -LIMIT, ratio: -bytesPerKey, met }];
}
