// lib/prisma.ts: the app's Prisma 7 client (driver adapter for node-postgres)
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

// One client per process: `next dev` evaluates this module again on every edit, and each copy would open a pool.
const cache = globalThis as typeof globalThis & { prisma?: PrismaClient };
cache.prisma ??= new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL }) });
export const prisma = cache.prisma;
