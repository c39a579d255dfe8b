// Prisma 7, generated from prisma/pg.prisma or prisma/mysql.prisma, as packages/postgres/README.md and
// packages/mysql/README.md set it up: PRISMA_SETUP=pool (the READMEs' snippets) builds the adapter on a pool
// of the app's and gives the store that pool too (@prisma/adapter-pg on a pg Pool, @prisma/adapter-mariadb
// on a mariadb pool); PRISMA_SETUP=url builds the adapter from the connection string, so it makes its pool
// itself and the store, which cannot see it, warns at start-up (SERVICE_PAY_UNGUARDED).
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import * as mariadb from 'mariadb';
import pg from 'pg';
import { PrismaClient as MysqlClient } from './generated/prisma-mysql/client';
import { PrismaClient as PgClient } from './generated/prisma-pg/client';
import { env, startShop } from './shop.ts';

const givenPool = process.env.PRISMA_SETUP === 'pool';

async function setUp() {
  if (process.env.DB === 'mysql') {
    const { PrismaStore } = await import('@service-pay/mysql/prisma');
    const pool = givenPool ? mariadb.createPool(env.databaseUrl.replace(/^mysql:/, 'mariadb:')) : undefined;
    const adapter = pool === undefined ? new PrismaMariaDb(env.databaseUrl) : new PrismaMariaDb(pool);
    const prisma = new MysqlClient({ adapter });
    return { prisma, store: new PrismaStore({ prisma, pool, tableName: env.inbox }) };
  }
  const { PrismaStore } = await import('@service-pay/postgres/prisma');
  const pool = givenPool ? new pg.Pool({ connectionString: env.databaseUrl }) : undefined;
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
