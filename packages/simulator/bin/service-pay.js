#!/usr/bin/env node
// The `service-pay` bin. A committed file rather than dist/cli.js itself, so `pnpm install` can link the
// bin before the first build (it warns about a missing bin otherwise). It only loads the built CLI.
import('../dist/cli.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli.js')) {
    console.error('service-pay: the CLI is not built yet; run `pnpm build` in the repository first.');
    process.exit(1);
  }
  throw error;
});
