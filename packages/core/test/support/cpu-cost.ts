/**
 * CPU cost of a unit of work, for tests that bound one cost by another as a ratio (never by a time).
 * Process CPU (user + system) over a batch, so time spent waiting for a loaded machine does not count;
 * the least of several interleaved batches, so a burst of load during one batch does not either.
 */
export function cpuPerRun(run: () => void, runs: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < runs; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / runs;
}

/**
 * The per-run CPU of each task, each the least of `rounds` batches, the batches of the tasks interleaved
 * so that each sees the same machine. In microseconds.
 */
export function leastCpuPerRun(tasks: ReadonlyArray<() => void>, runs: number, rounds = 7): number[] {
  const least = tasks.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < rounds; round++) {
    tasks.forEach((task, i) => {
      least[i] = Math.min(least[i] as number, cpuPerRun(task, runs));
    });
  }
  return least;
}
