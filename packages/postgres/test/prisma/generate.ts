import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrismaClient as generate } from '@service-pay/test-kit/prisma';

/** Vitest global setup of the postgres project (and its ORM bench): the Prisma client of test/prisma/schema.prisma. */
export default function generatePrismaClient(): void {
  const here = dirname(fileURLToPath(import.meta.url));
  generate(join(here, 'schema.prisma'), join(here, '../..'));
}
