import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
let hooked = false;

/**
 * Kills `child` when this process exits, however the test ended (a failed assertion skips nothing here,
 * but a crashed hook or a worker torn down early would otherwise leave servers running, or stopped by
 * SIGSTOP for good). Returns a function that forgets the child once it has exited by itself.
 *
 * @example
 * ```ts
 * const child = spawn('redis-server', ['--port', String(port)]);
 * child.once('exit', killOnExit(child));
 * ```
 */
export function killOnExit(child: ChildProcess): () => void {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        c.kill('SIGCONT');
        c.kill('SIGKILL');
      }
    });
  }
  children.add(child);
  return () => children.delete(child);
}
