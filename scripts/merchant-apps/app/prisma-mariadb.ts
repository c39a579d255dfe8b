// Prisma 7 on @prisma/adapter-mariadb, as packages/mysql/README.md sets it up (the adapter makes its pool
// itself, so the store warns at start-up that writes beside ctx.tx cannot be refused).
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaStore } from '@service-pay/mysql/prisma';
import { PrismaClient } from './generated/prisma-mysql/client'; // generated from prisma/mysql.prisma
import { env, startShop } from './shop.ts';

const prisma = new PrismaClient({ adapter: new PrismaMariaDb(env.databaseUrl) });
const store = new PrismaStore({ prisma, tableName: env.inbox });
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
