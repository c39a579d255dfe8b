import { expect, it } from 'vitest';

// The same test files run against NestJS 12 (the dev dependency) and NestJS 11 (vitest.nest11.config.ts):
// this makes sure each run has the Nest it claims.
it('runs against the NestJS major its project names', async () => {
  const { default: manifest } = (await import('@nestjs/core/package.json', { with: { type: 'json' } })) as {
    default: { version: string };
  };
  expect(manifest.version.split('.')[0]).toBe(process.env.EXPECTED_NEST_MAJOR);
});
