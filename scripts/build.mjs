#!/usr/bin/env node
// `pnpm build`: builds the packages whose inputs changed since their last build, and the packages that
// depend on them; the others keep their dist. `pnpm test`, `pnpm bench` and the other scripts build first,
// and CI builds before `pnpm test` does: the second build of an unchanged tree (about 100 s of tsup on a
// 2-core machine) finds nothing to do.
//
//   node scripts/build.mjs            # what changed, and what depends on it
//   node scripts/build.mjs --force    # every package
//
// A package's inputs are every file of its folder but dist/, node_modules/, test/, bench/ and its Markdown,
// the shared build settings (tsup.shared.ts, tsconfig.base.json), the lockfile (the tools' and the
// dependencies' versions) and the inputs of the workspace packages it depends on, by any kind of
// dependency (the SQL layer is compiled into the stores). Their hash, and the list of files the build
// left in dist with their sizes, are kept in node_modules/.cache/service-pay-build/: a dist that lost or
// changed a file since is built again, whatever the hash says.
//
// Runs on every supported Node line, Node 20 included: no API newer than 20.9.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root, run, workspaceProjects } from './lib/workspace.mjs';

const stampDir = join(root, 'node_modules', '.cache', 'service-pay-build');
const SHARED_INPUTS = ['tsup.shared.ts', 'tsconfig.base.json', 'pnpm-lock.yaml'];
const NOT_INPUTS = new Set(['dist', 'node_modules', 'test', 'bench', '.turbo', 'coverage']);

/** The packages (not the examples), by name: each one's folder, workspace dependencies of any kind, and whether it builds. */
function workspacePackages() {
  const byName = new Map();
  for (const [name, { dir, pkg }] of workspaceProjects()) {
    if (relative(root, dir).split(/[\\/]/)[0] !== 'packages') continue;
    const kinds = [pkg.dependencies, pkg.devDependencies, pkg.peerDependencies];
    const deps = new Set(kinds.flatMap((deps) => Object.keys(deps ?? {})));
    byName.set(name, { name, dir, deps, builds: Boolean(pkg.scripts?.build) });
  }
  for (const pkg of byName.values()) pkg.deps = [...pkg.deps].filter((name) => byName.has(name)).sort();
  return byName;
}

/** Every file under `dir`, depth first, but the entries `skip` refuses (by name). */
function filesUnder(dir, skip = () => false) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(path, skip));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/** One hash of the files' root-relative paths and contents, in the order given. */
function hashFiles(paths) {
  const hash = createHash('sha256');
  for (const path of paths)
    hash
      .update(`${relative(root, path)}\0`)
      .update(readFileSync(path))
      .update('\0');
  return hash.digest('hex');
}

const isNotInput = (name) => NOT_INPUTS.has(name) || name.endsWith('.md');
const sharedHash = hashFiles(SHARED_INPUTS.map((file) => join(root, file)));

/** The hash of a package's own files (computed once each). */
function ownHash(pkg, memo) {
  let digest = memo.get(pkg.name);
  if (digest === undefined) {
    digest = hashFiles(filesUnder(pkg.dir, isNotInput).sort());
    memo.set(pkg.name, digest);
  }
  return digest;
}

/**
 * The hash of a package's inputs: its own files and those of every workspace package it reaches through its
 * dependencies of any kind. Reached, not nested: the packages' dev dependencies on each other (a test of one
 * runs another) make cycles, and a package in a cycle is built again with the others when any of them changes.
 */
function inputHash(pkg, byName, memo) {
  const reached = new Set([pkg.name]);
  const stack = [pkg];
  while (stack.length > 0) {
    for (const dep of stack.pop().deps) {
      if (reached.has(dep)) continue;
      reached.add(dep);
      stack.push(byName.get(dep));
    }
  }
  const hash = createHash('sha256').update(sharedHash);
  for (const name of [...reached].sort()) hash.update(`${name}\0${ownHash(byName.get(name), memo)}\0`);
  return hash.digest('hex');
}

/** What the build left in dist: each file's path and size, or undefined when there is no dist. */
function distListing(dir) {
  const dist = join(dir, 'dist');
  if (!existsSync(dist)) return undefined;
  return filesUnder(dist)
    .map((path) => `${relative(dist, path)} ${statSync(path).size}`)
    .sort()
    .join('\n');
}

const stampPath = (pkg) => join(stampDir, `${pkg.name.replace('/', '+')}.json`);

function upToDate(pkg, hash) {
  if (!existsSync(stampPath(pkg))) return false;
  const stamp = JSON.parse(readFileSync(stampPath(pkg), 'utf8'));
  const listing = distListing(pkg.dir);
  return stamp.inputs === hash && listing !== undefined && listing.length > 0 && stamp.dist === listing;
}

const force = process.argv.includes('--force');
const byName = workspacePackages();
const memo = new Map();
const buildable = [...byName.values()].filter((pkg) => pkg.builds);
const hashes = new Map(buildable.map((pkg) => [pkg.name, inputHash(pkg, byName, memo)]));
const stale = buildable.filter((pkg) => force || !upToDate(pkg, hashes.get(pkg.name)));

if (stale.length === 0) {
  console.log(`build: all ${buildable.length} packages up to date (node scripts/build.mjs --force rebuilds them)`);
  process.exit(0);
}
if (stale.length < buildable.length) {
  console.log(
    `build: ${stale.map((pkg) => pkg.name).join(', ')} (the other ${buildable.length - stale.length} up to date)`,
  );
}
// pnpm orders the selected packages by their dependencies and builds independent ones side by side. A stamp
// is removed before and written after: a build that fails leaves its package stale.
mkdirSync(stampDir, { recursive: true });
for (const pkg of stale) writeFileSync(stampPath(pkg), '{}');
const filters = stale.flatMap((pkg) => ['--filter', `./${relative(root, pkg.dir)}`]);
run('pnpm', ['-r', ...filters, 'run', 'build']);
for (const pkg of stale) {
  const stamp = { inputs: hashes.get(pkg.name), dist: distListing(pkg.dir) };
  writeFileSync(stampPath(pkg), `${JSON.stringify(stamp)}\n`);
}
