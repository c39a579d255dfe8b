#!/usr/bin/env node
// `pnpm demo`, from a fresh clone: installs only what the demo runs, builds only the packages it imports,
// then runs it (scripts/lib/workspace.mjs says why not a full install and build). `pnpm test` installs and
// builds everything itself.
import {
  buildJavaScript,
  DEMO,
  installRuntimeOnly,
  run,
  runtimeClosure,
  seconds,
  upToDate,
  workspaceProjects,
} from './lib/workspace.mjs';

const args = process.argv.slice(2);
const started = Date.now();

// 1. Install.
let since = Date.now();
console.log('== demo 1/3: install what the demo runs');
console.log(`   ${installRuntimeOnly()}`);
console.log(`   installed in ${seconds(since)}`);

// 2. Build the packages the demo imports: JavaScript only. `pnpm build` builds every package with its types.
const projects = workspaceProjects();
const toBuild = runtimeClosure(projects, [DEMO]).filter(({ pkg }) => pkg.scripts?.build);
const stale = toBuild.filter((project) => !upToDate(project));
since = Date.now();
console.log(
  `== demo 2/3: build ${stale.length} of the ${toBuild.length} packages it imports (${toBuild.length - stale.length} up to date; JavaScript only)`,
);
await buildJavaScript(projects, stale);
console.log(`   built in ${seconds(since)}`);

// 3. Run it.
console.log('== demo 3/3: the simulator and the Express shop (examples/express-orders)');
run('pnpm', ['--silent', '--filter', DEMO, 'run', 'demo', ...args]);
console.log(
  `== demo: ${seconds(started)} in all. \`pnpm test\` installs and builds everything else and runs every test.`,
);
