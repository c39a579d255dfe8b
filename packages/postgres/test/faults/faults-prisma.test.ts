import { faultRows } from './fault-rows.js';

// The fault rows on Prisma 7 with @prisma/adapter-pg (PrismaStore): the same apps, scenarios and counts as
// node-postgres, the credit written with the generated Prisma client through ctx.tx.
faultRows('prisma');
