import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// The same generation as @service-pay/postgres's tests (a stub for the schema engine that generate never
// runs), on this package's MySQL schema.
import { generatePrismaClientOf } from '../../../postgres/test/prisma/generate.js';

/** Vitest global setup of the mysql project: the Prisma client of test/prisma/schema.prisma. */
export default function generatePrismaClient(): void {
  const here = dirname(fileURLToPath(import.meta.url));
  generatePrismaClientOf(join(here, 'schema.prisma'), join(here, '../..'));
}
