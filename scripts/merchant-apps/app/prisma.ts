// Prisma 7, generated from prisma/pg.prisma or prisma/mysql.prisma. DB=mysql: @prisma/adapter-mariadb as
// packages/mysql/README.md sets it up (the adapter makes its pool itself: the store warns at start-up).
// DB=postgres: @prisma/adapter-pg, PRISMA_SETUP=readme as the README's snippet (the adapter made from the
// connection string: the store cannot see the pool and warns at start-up) or PRISMA_SETUP=pool as its
// advice under "What not to do" (the adapter built on a pg Pool that the store is given too).
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient as MysqlClient } from './generated/prisma-mysql/client';
import { PrismaClient as PgClient } from './generated/prisma-pg/client';
import { env, startShop } from './shop.ts';

async function setUp() {
  if (process.env.DB === 'mysql') {
    const { PrismaStore } = await import('@service-pay/mysql/prisma');
    const prisma = new MysqlClient({ adapter: new PrismaMariaDb(env.databaseUrl) });
    return { prisma, store: new PrismaStore({ prisma, tableName: env.inbox }) };
  }
  const { PrismaStore } = await import('@service-pay/postgres/prisma');
  const pool = process.env.PRISMA_SETUP === 'pool' ? new pg.Pool({ connectionString: env.databaseUrl }) : undefined;
  const adapter = pool === undefined ? new PrismaPg({ connectionString: env.databaseUrl }) : new PrismaPg(pool);
  const prisma = new PgClient({ adapter });
  return { prisma, store: new PrismaStore({ prisma, pool, transactionTimeoutMs: 60_000, tableName: env.inbox }) };
}

const { prisma, store } = await setUp();
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
