// app/api/webhooks/service/route.ts
import { createRouteHandler } from '@service-pay/next';
import { PrismaStore } from '@service-pay/postgres/prisma';
import { pool, prisma } from '@/lib/prisma';

export const runtime = 'nodejs'; // Prisma's driver adapter needs TCP: not the Edge runtime
export const POST = createRouteHandler({
  secret: process.env.SERVICE_WEBHOOK_SECRET!,
  store: new PrismaStore({ prisma, pool, autoMigrate: false }), // the table is instrumentation.ts's job
  onPaymentPaid: async (event, ctx) => {
    await ctx.tx.credit.create({ data: { paymentId: event.paymentId, orderNo: event.orderNo, amount: event.amount } });
  },
});
