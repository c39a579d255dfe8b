#!/usr/bin/env node
// `pnpm demo`, from a fresh clone: installs only what the demo runs, builds only the packages it imports,
// then runs it. Plain JavaScript with no dependencies, because it runs before anything is installed.
//
// Why not `pnpm install && pnpm build`: a full install also fetches what only the tests need (Prisma,
// TypeORM, MikroORM, Knex, better-sqlite3, Next.js, NestJS, Bun, Deno, workerd...), and a full build
// writes every package's type declarations; together minutes, for a demo whose own work takes seconds.
// `pnpm test` installs and builds everything itself.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DEMO = '@service-pay/example-express-orders';
const args = process.argv.slice(2);
const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Every workspace project by name: its folder and manifest. */
function workspaceProjects() {
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

/** The demo and the workspace projects it depends on at run time (`dependencies`, as `--filter-prod` reads them). */
function demoClosure(projects) {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name) || !projects.has(name)) return;
    seen.add(name);
    for (const [dep, range] of Object.entries(projects.get(name).pkg.dependencies ?? {}))
      if (String(range).startsWith('workspace:')) visit(dep);
  };
  visit(DEMO);
  return [...seen].map((name) => ({ name, ...projects.get(name) }));
}

/** True when node_modules holds a full install (dev dependencies included): the demo then keeps it as it is. */
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

function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// 1. Install.
let since = Date.now();
if (fullInstallPresent() && installedLockfileIsCurrent()) {
  console.log('== demo 1/3: install: nothing to do (a full install of this lockfile is already here)');
} else if (fullInstallPresent()) {
  // Never narrowed back to the demo's packages: the tests' dependencies stay installed.
  console.log('== demo 1/3: install (a full install is here, of another lockfile: brought up to date)');
  run('pnpm', ['install', '--frozen-lockfile', '--reporter=silent']);
} else {
  console.log(
    `== demo 1/3: install what the demo runs, and nothing the tests need (${DEMO} and its dependencies; \`pnpm test\` installs the rest)`,
  );
  run('pnpm', ['install', '--frozen-lockfile', '--prod', '--filter-prod', `${DEMO}...`, '--reporter=append-only']);
}
console.log(`   installed in ${seconds(since)}`);

// 2. Build the packages the demo imports: JavaScript only, all at once (no package's JavaScript build reads
// another's output). `pnpm build` builds every package with its type declarations.
const projects = workspaceProjects();
const toBuild = demoClosure(projects).filter(({ pkg }) => pkg.scripts?.build);
const newest = (path) => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newest(join(path, entry))));
};
const upToDate = ({ dir }) => {
  const output = join(dir, 'dist', 'index.js');
  if (!existsSync(output)) return false;
  const inputs = ['src', 'package.json', 'tsup.config.ts'].map((p) => join(dir, p)).filter(existsSync);
  return statSync(output).mtimeMs > Math.max(...inputs.map(newest));
};
const stale = toBuild.filter((project) => !upToDate(project));
since = Date.now();
console.log(
  `== demo 2/3: build ${stale.length} of the ${toBuild.length} packages it imports (${toBuild.length - stale.length} up to date; JavaScript only)`,
);
const tsup = createRequire(join(projects.get(DEMO).dir, 'package.json')).resolve('tsup/dist/cli-default.js');
const queue = [...stale];
const failures = [];
async function worker() {
  for (let project = queue.shift(); project !== undefined; project = queue.shift()) {
    const one = Date.now();
    const { code, output } = await new Promise((resolve) => {
      const child = spawn(process.execPath, [tsup, '--no-dts', '--silent'], { cwd: project.dir });
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
      });
      child.stderr.on('data', (chunk) => {
        text += chunk;
      });
      child.on('close', (status) => resolve({ code: status, output: text }));
    });
    if (code === 0) console.log(`   built ${project.name} in ${seconds(one)}`);
    else failures.push({ project, output });
  }
}
await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, worker));
if (failures.length > 0) {
  for (const { project, output } of failures) console.error(`\n${project.name}: the build failed\n${output}`);
  process.exit(1);
}
console.log(`   built in ${seconds(since)}`);

// 3. Run it.
console.log('== demo 3/3: the simulator and the Express shop (examples/express-orders)');
run('pnpm', ['--silent', '--filter', DEMO, 'run', 'demo', ...args]);
console.log(
  `== demo: ${seconds(started)} in all. \`pnpm test\` installs and builds everything else and runs every test.`,
);
