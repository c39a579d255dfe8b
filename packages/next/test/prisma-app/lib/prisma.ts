// lib/prisma.ts: the app's Prisma 7 client (driver adapter for node-postgres)
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client';

// One client per process: `next dev` evaluates this module again on every edit, and each copy would open a pool.
// The adapter runs on a pool of ours so the store can be given it too: it then refuses a credit written
// through `prisma` beside ctx.tx during a delivery (Prisma shows the store none of its statements).
const cache = globalThis as typeof globalThis & { prisma?: PrismaClient; pool?: pg.Pool };
cache.pool ??= new pg.Pool({ connectionString: process.env.DATABASE_URL });
cache.prisma ??= new PrismaClient({ adapter: new PrismaPg(cache.pool) });
export const pool = cache.pool;
export const prisma = cache.prisma;
