import { defineConfig } from 'vitest/config';

// One test per row of the guarantees table: real app processes, their own Redis, the simulator as the
// sender. Files run one at a time (each kills, pauses or cuts a server on a timetable, and two at once on a
// 2-core machine would blur the timing they set up), after the unit tier and the packages' fault rows
// (group 2 of `pnpm test`).
export default defineConfig({
  test: {
    name: 'faults',
    include: ['faults/**/*.test.ts'],
    sequence: { groupOrder: 2 },
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 90_000,
  },
});
