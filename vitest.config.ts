import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Every package, the examples and the cross-package tests bring their own vitest config; this one only
// gathers them, so `pnpm test` runs everything, in one run with one summary, by tiers (sequence.groupOrder
// in each config): 0 unit and conformance, in parallel; 1 the packages' fault rows (vitest.faults.config.ts:
// servers of their own killed and restarted), two files at a time; 2 test/faults, one at a time; 3 chaos;
// 4 the merchant apps built from the tarballs (test/merchant-apps).
export default defineConfig({
  test: {
    // Tier 0 waits on the databases more than it computes: one file at a time (Vitest's default, a core
    // less than the machine has) left a 2-core machine 35% idle; one file per core takes the same tiers
    // from 332 s to 204 s there. Each file makes tables, keys and servers of its own, so files never share
    // state. The tiers that kill servers set their own limit.
    maxWorkers: availableParallelism(),
    projects: [
      'packages/*/vitest.config.ts',
      'packages/*/vitest.faults.config.ts',
      'packages/core/vitest.web.config.ts',
      'packages/nestjs/vitest.nest11.config.ts',
      'examples/*/vitest.config.ts',
      'test/vitest.config*.ts',
    ],
  },
});
