import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Vitest global setup of the postgres project: generates the Prisma client of test/prisma/schema.prisma
 * once, before any test file imports it. `prisma generate` never runs the schema engine, but Prisma asks
 * for its binary, which it would download (this project's machines reach only the npm registry): a stub
 * stands in for it. Tables are made with plain SQL, so `prisma migrate` (the engine's job) is never needed.
 */
export default function generatePrismaClient(): void {
  const here = dirname(fileURLToPath(import.meta.url));
  generatePrismaClientOf(join(here, 'schema.prisma'), join(here, '../..'));
}

/** `prisma generate` of `schema`, run in `packageDir` (whose node_modules hold `prisma`), engine stubbed. */
export function generatePrismaClientOf(schema: string, packageDir: string): void {
  const stubDir = mkdtempSync(join(tmpdir(), 'prisma-engine-stub-'));
  const stub = join(stubDir, 'schema-engine');
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  try {
    execFileSync(join(packageDir, 'node_modules/.bin/prisma'), ['generate', '--schema', schema], {
      cwd: packageDir,
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: stub,
        PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 120_000,
    });
  } finally {
    rmSync(stubDir, { recursive: true, force: true });
  }
}
