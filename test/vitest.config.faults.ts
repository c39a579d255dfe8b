import { defineConfig } from 'vitest/config';

// One test per row of design.md section 4's guarantees table: real app processes, their own Redis, the
// simulator as the sender. Files run one at a time: each kills, pauses or cuts a server on a timetable,
// and two of them at once on a 2-core machine would blur the timing they set up.
export default defineConfig({
  test: {
    name: 'faults',
    include: ['faults/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 90_000,
  },
});
