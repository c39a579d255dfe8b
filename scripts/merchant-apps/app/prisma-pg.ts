// Prisma 7 on @prisma/adapter-pg. PRISMA_SETUP=readme: the README's snippet (the adapter made from the
// connection string, so the store cannot see the pool and warns at start-up); PRISMA_SETUP=pool: the
// README's advice under "What not to do" (the adapter built on a pg Pool that the store is given too).
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaStore } from '@service-pay/postgres/prisma';
import pg from 'pg';
import { PrismaClient } from './generated/prisma-pg/client'; // generated from prisma/pg.prisma
import { env, startShop } from './shop.ts';

const pool = process.env.PRISMA_SETUP === 'pool' ? new pg.Pool({ connectionString: env.databaseUrl }) : undefined;
const adapter = pool === undefined ? new PrismaPg({ connectionString: env.databaseUrl }) : new PrismaPg(pool);
const prisma = new PrismaClient({ adapter });
const store = new PrismaStore({ prisma, pool, transactionTimeoutMs: 60_000, tableName: env.inbox });
const row = (paymentId: string) => ({ data: { paymentId, client: env.client } });

startShop({
  store,
  credit: (event, tx) => tx.credit.create(row(event.paymentId)),
  mistakes: {
    'global: prisma.credit.create': (event) => prisma.credit.create(row(event.paymentId)),
    'unawaited: ctx.tx.credit.create': (event, tx) => {
      tx.credit.create(row(event.paymentId));
    },
    'own: prisma.$transaction': (event) => prisma.$transaction((t) => t.credit.create(row(event.paymentId))),
  },
});
