// What `pnpm demo` and `pnpm pack:shop` share: a production-only install of what they run, and a
// JavaScript-only build of the packages they use. Plain JavaScript with no dependencies, because it runs
// before anything is installed.
//
// Why not `pnpm install && pnpm build`: a full install also fetches what only the tests need (Prisma,
// TypeORM, MikroORM, Knex, better-sqlite3, Next.js, NestJS, Bun, Deno, workerd...), and a full build
// writes every package's type declarations; together minutes, for commands whose own work takes seconds.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The example shop whose run-time dependencies hold the simulator, tsx and the build's tsup. */
export const DEMO = '@service-pay/example-express-orders';

/** Seconds since a `Date.now()`, for the step lines. */
export const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Every workspace project by name: its folder and manifest. */
export function workspaceProjects() {
  const projects = new Map();
  for (const group of ['packages', 'examples']) {
    for (const entry of readdirSync(join(root, group))) {
      const dir = join(root, group, entry);
      const manifest = join(dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      projects.set(pkg.name, { dir, pkg });
    }
  }
  return projects;
}

/** The named projects and the workspace projects they depend on at run time (`dependencies`, as `--filter-prod` reads them). */
export function runtimeClosure(projects, names) {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name) || !projects.has(name)) return;
    seen.add(name);
    for (const [dep, range] of Object.entries(projects.get(name).pkg.dependencies ?? {}))
      if (String(range).startsWith('workspace:')) visit(dep);
  };
  for (const name of names) visit(name);
  return [...seen].map((name) => ({ name, ...projects.get(name) }));
}

/** True when node_modules holds a full install (dev dependencies included): it is then kept as it is. */
function fullInstallPresent() {
  const state = join(root, 'node_modules', '.modules.yaml');
  if (!existsSync(state)) return false;
  // pnpm writes it as JSON (`"devDependencies": true`), older pnpm as YAML (`devDependencies: true`).
  return /^\s*"?devDependencies"?:\s*true\b/m.test(readFileSync(state, 'utf8'));
}

/** True when node_modules was installed from this very lockfile (pnpm keeps a copy of the one it used). */
function installedLockfileIsCurrent() {
  const installed = join(root, 'node_modules', '.pnpm', 'lock.yaml');
  return existsSync(installed) && readFileSync(installed).equals(readFileSync(join(root, 'pnpm-lock.yaml')));
}

/** Runs a command in the repository's root with the output shown; exits with its status if it fails. */
export function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * Installs the demo shop's run-time dependencies and nothing the tests need; a full install already here is
 * kept (never narrowed back). Returns the line that says what it did.
 */
export function installRuntimeOnly() {
  if (fullInstallPresent() && installedLockfileIsCurrent())
    return 'nothing to do (a full install of this lockfile is already here)';
  if (fullInstallPresent()) {
    run('pnpm', ['install', '--frozen-lockfile', '--reporter=silent']);
    return 'a full install is here, of another lockfile: brought up to date';
  }
  run('pnpm', ['install', '--frozen-lockfile', '--prod', '--filter-prod', `${DEMO}...`, '--reporter=append-only']);
  return `what ${DEMO} runs and its build needs, nothing the tests need (\`pnpm install\` installs the rest)`;
}

const newest = (path) => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newest(join(path, entry))));
};

/** True when the project's `dist/index.js` is newer than its sources and build configuration. */
export function upToDate({ dir }) {
  const output = join(dir, 'dist', 'index.js');
  if (!existsSync(output)) return false;
  const inputs = ['src', 'package.json', 'tsup.config.ts'].map((p) => join(dir, p)).filter(existsSync);
  return statSync(output).mtimeMs > Math.max(...inputs.map(newest));
}

/**
 * Builds the projects' JavaScript (no type declarations), two at a time or more: no package's JavaScript
 * build reads another's output. Prints one line per package; exits 1 with the output of any that failed.
 */
export async function buildJavaScript(projects, toBuild) {
  const tsup = createRequire(join(projects.get(DEMO).dir, 'package.json')).resolve('tsup/dist/cli-default.js');
  const queue = [...toBuild];
  const failures = [];
  async function worker() {
    for (let project = queue.shift(); project !== undefined; project = queue.shift()) {
      const one = Date.now();
      const { code, output } = await spawnCollecting(process.execPath, [tsup, '--no-dts', '--silent'], project.dir);
      if (code === 0) console.log(`   built ${project.name} in ${seconds(one)}`);
      else failures.push({ project, output });
    }
  }
  await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, worker));
  if (failures.length > 0) {
    for (const { project, output } of failures) console.error(`\n${project.name}: the build failed\n${output}`);
    process.exit(1);
  }
}

/**
 * The manifest a publish would upload, made without the workspace's links: `workspace:` ranges of
 * dependencies and peers turned into the versions of this checkout, dev dependencies dropped (a tarball's
 * are never installed, and a production install links none of them for `pnpm pack` to read).
 */
function publishedManifest(pkg, projects) {
  const pinned = (ranges) => {
    if (ranges === undefined) return undefined;
    const out = {};
    for (const [name, range] of Object.entries(ranges)) {
      const match = /^workspace:(.*)$/.exec(String(range));
      if (match === null) out[name] = range;
      else {
        const version = projects.get(name)?.pkg.version;
        if (version === undefined) throw new Error(`${pkg.name}: ${name} is not in this workspace`);
        out[name] = match[1] === '*' || match[1] === '' ? version : `${match[1]}${version}`;
      }
    }
    return out;
  };
  const { devDependencies: _dev, ...rest } = pkg;
  return { ...rest, dependencies: pinned(pkg.dependencies), peerDependencies: pinned(pkg.peerDependencies) };
}

/**
 * `pnpm pack` of each project into `out`; the tarballs by short name. With `projects` (every workspace
 * project), each is packed from a copy whose manifest is {@link publishedManifest}, so a production install
 * packs too; without it, in place, where pnpm turns the workspace ranges into versions itself.
 */
export async function packInto(out, packages, label, projects) {
  const scratch = projects === undefined ? undefined : mkdtempSync(join(tmpdir(), 'service-pay-pack-'));
  const packOne = async ({ dir, pkg }) => {
    let cwd = dir;
    if (scratch !== undefined) {
      cwd = join(scratch, pkg.name.replace('/', '+'));
      cpSync(dir, cwd, { recursive: true, filter: (source) => !source.split(sep).includes('node_modules') });
      writeFileSync(join(cwd, 'package.json'), `${JSON.stringify(publishedManifest(pkg, projects), null, 2)}\n`);
    }
    const { code, output } = await spawnCollecting('pnpm', ['pack', '--pack-destination', out], cwd);
    const file = `${pkg.name.replace('@', '').replace('/', '-')}-${pkg.version}.tgz`;
    if (code !== 0 || !existsSync(join(out, file)))
      throw new Error(`${label}: pnpm pack in ${dir} wrote no ${join(out, file)}\n${output}`);
    console.log(`   packed ${pkg.name}@${pkg.version}`);
    return [pkg.name.replace('@service-pay/', ''), join(out, file)];
  };
  try {
    // Each `pnpm pack` is mostly pnpm starting up: all at once.
    return new Map(await Promise.all(packages.map(packOne)));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  } finally {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs a command to its end; its exit code and its output (stdout and stderr together). */
function spawnCollecting(command, commandArgs, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd });
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
    });
    child.stderr.on('data', (chunk) => {
      text += chunk;
    });
    child.on('error', (error) => resolve({ code: 1, output: error.message }));
    child.on('close', (status) => resolve({ code: status, output: text }));
  });
}
