#!/usr/bin/env node
// `pnpm pack:all`: every package's tarball in one folder (`tarballs/`), and the `npm install` line that
// installs them in an app. Until the packages are on the npm registry, this is how an app gets them: `pnpm
// pack` writes the tarball a publish would upload (workspace ranges turned into versions), so npm
// resolves `@service-pay/core` from its own tarball beside the adapter's. Run `pnpm build` first (the
// tarballs carry the type declarations it writes); `pnpm pack:shop` packs the quick start's five alone.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packInto } from './lib/workspace.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'tarballs');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

const packages = readdirSync(join(root, 'packages'))
  .map((entry) => join(root, 'packages', entry))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);

const unbuilt = packages.filter(({ dir, pkg }) => !existsSync(join(dir, pkg.types ?? 'dist/index.d.ts')));
if (unbuilt.length > 0) {
  console.error(
    `pack:all: ${unbuilt.map(({ pkg }) => pkg.name).join(', ')} not built (with types): run \`pnpm build\` first.`,
  );
  process.exit(1);
}

const tarballs = await packInto(out, packages, 'pack:all');

const line = (...names) => `npm install ${names.map((name) => tarballs.get(name)).join(' ')}`;
console.log(`
${tarballs.size} tarballs in ${out}. In your app, install core with the packages you use, for example:

  ${line('core', 'express', 'postgres')} express pg

and, for the local payment service (\`npx service-pay listen\`), the simulator with the client and core it
runs on (their tarballs in the same command, or npm looks for them on the registry):

  ${line('simulator', 'client', 'core')}

Every package: ${[...tarballs.keys()].join(', ')} (each as ${out}/service-pay-<name>-<version>.tgz).`);
