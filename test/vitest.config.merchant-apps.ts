import { defineConfig } from 'vitest/config';

// The merchant's mistakes in a fresh app built from the packed tarballs, with the clients from the npm
// registry (scripts/merchant-apps): an npm install and a compile of better-sqlite3, 1.5-7 min depending on
// the machine's load. Last in `pnpm test` (group 4), alone, so it neither slows nor is slowed by the rest.
export default defineConfig({
  test: {
    name: 'merchant-apps',
    include: ['merchant-apps/**/*.test.ts'],
    sequence: { groupOrder: 4 },
    testTimeout: 900_000,
  },
});
