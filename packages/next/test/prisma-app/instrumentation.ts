// instrumentation.ts, at the project root (beside app/)
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return; // the Edge runtime has no TCP database client
  const { PrismaStore } = await import('@service-pay/postgres/prisma');
  const { pool, prisma } = await import('@/lib/prisma');
  await new PrismaStore({ prisma, pool }).migrate(); // idempotent; the route's store finds the table
}
