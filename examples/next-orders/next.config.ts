import type { NextConfig } from 'next';

const config: NextConfig = {
  // The shop kit is TypeScript source in this workspace: Next.js compiles it with the app.
  transpilePackages: ['@service-pay/example-shop-kit'],
  // Loaded by Node.js at run time, not bundled: PGlite finds its WebAssembly and data files next to its own
  // code, pg has optional native parts, and ioredis is a plain Node.js client.
  serverExternalPackages: ['@electric-sql/pglite', 'pg', 'ioredis'],
};

export default config;
