#!/usr/bin/env node
// `pnpm pack:shop`, from a fresh clone: the tarballs of the five packages the README's Express +
// PostgreSQL quick start installs (core, express, postgres, and the simulator with the client it runs on),
// in `tarballs/`, and the `npm install` line for them. Installs only what they need to build (the demo's
// production install), builds their JavaScript only, and packs them: well under a minute, where
// `pnpm install && pnpm build && pnpm pack:all` (every package, with type declarations) takes minutes.
//
// The tarballs carry no type declarations: their JavaScript runs in Node and under tsx as it is, and the
// declarations (a TypeScript compile per package, 1 to 3 minutes each on two cores) are what
// `pnpm pack:all` after a full `pnpm build` adds.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildJavaScript,
  installRuntimeOnly,
  packInto,
  root,
  runtimeClosure,
  seconds,
  upToDate,
  workspaceProjects,
} from './lib/workspace.mjs';

const SHOP = ['core', 'express', 'postgres', 'simulator', 'client'].map((name) => `@service-pay/${name}`);
const started = Date.now();

let since = Date.now();
console.log('== pack:shop 1/3: install what the packages need to build');
console.log(`   ${installRuntimeOnly()}`);
console.log(`   installed in ${seconds(since)}`);

const projects = workspaceProjects();
const packages = runtimeClosure(projects, SHOP);
const stale = packages.filter((project) => !upToDate(project));
since = Date.now();
console.log(
  `== pack:shop 2/3: build ${stale.length} of ${packages.length} packages (${packages.length - stale.length} up to date; JavaScript only)`,
);
await buildJavaScript(projects, stale);
console.log(`   built in ${seconds(since)}`);

since = Date.now();
const out = join(root, 'tarballs');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
console.log('== pack:shop 3/3: pack');
const tarballs = await packInto(out, packages, 'pack:shop', projects);
console.log(`   packed in ${seconds(since)}`);

console.log(`
== pack:shop: ${tarballs.size} tarballs in ${out} in ${seconds(started)}. In your app:

  npm install express pg ${SHOP.map((name) => tarballs.get(name.replace('@service-pay/', ''))).join(' ')}

(JavaScript only; for their type declarations and every other package: \`pnpm install && pnpm build &&
pnpm pack:all\`.)`);
