import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// Every ```ts block of every README in the repository compiles under strict tsc exactly as a reader copies
// it: its imports in the block, nothing hidden. Each block is written, as a module of its own, into a folder
// beside its README: imports resolve from there as they would in an app that installed that package (its
// dependencies and dev dependencies). One tsc program checks them all. A block that is deliberately a
// fragment says so in its text and is marked on the line right before its fence:
// `<!-- not-compiled: why -->`; there are few. A block that is a file of an app a test builds (imports of
// that app's own modules, which resolve only there) is marked `<!-- built-as: path/from/the/root -->`
// instead: it must equal that file, which the app's build compiles. No README may give a block hidden context (a comment
// before its fence that a reader never sees, such as `<!-- compile-with: declarations -->`): the test
// refuses it, so that what compiles here is what a reader copies.
const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', '.next', '.svelte-kit', '.astro', '.git', 'coverage']);
const FOLDER = '.readme-blocks';
const hiddenContext: string[] = [];

/** Where a README's blocks compile: beside it, except the root's, which compile in test/ (its dependencies). */
const compileDir = (readmeDir: string) => (readmeDir === root.replace(/\/$/, '') ? join(root, 'test') : readmeDir);

function readmes(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (SKIP_DIRS.has(entry) || entry.startsWith('.readme-') || entry.startsWith('.quick-start')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...readmes(path));
    else if (entry === 'README.md') found.push(path);
  }
  return found;
}

interface Block {
  readme: string;
  /** 1-based line of the block's first code line in the README. */
  line: number;
  file: string;
}

const blocks: Block[] = [];
/** ```js blocks: programs a reader saves as `.mjs` (or in a `"type": "module"` project) and runs with node. */
const scripts: { where: string; file: string }[] = [];
const skipped: string[] = [];
/** Blocks that are a tested app's files, compiled by that app's own build. */
const builtAs: { where: string; path: string; code: string }[] = [];
const folders = new Set<string>();
for (const readme of readmes(root.replace(/\/$/, ''))) {
  const lines = readFileSync(readme, 'utf8').split('\n');
  lines.forEach((line, at) => {
    if (line.includes('<!-- compile-with')) hiddenContext.push(`${relative(root, readme)}:${at + 1}`);
  });
  const dir = join(compileDir(dirname(readme)), FOLDER);
  let n = 0;
  for (let i = 0; i < lines.length; i++) {
    const js = /^```(js|javascript|mjs)\s*$/.exec(lines[i] as string);
    if (js !== null) {
      const end = lines.findIndex((line, at) => at > i && line === '```');
      mkdirSync(dir, { recursive: true });
      folders.add(dir);
      const file = join(dir, `${relative(root, readme).replaceAll('/', '_').replace(/\.md$/, '')}-${++n}.mjs`);
      writeFileSync(file, lines.slice(i + 1, end).join('\n'));
      scripts.push({ where: `${relative(root, readme)}:${i + 2}`, file });
      i = end;
      continue;
    }
    // Blocks inside a list item are indented; they count the same (their indent is taken off).
    const fence = /^(\s*)```(ts|typescript|tsx)\s*$/.exec(lines[i] as string);
    if (fence === null) continue;
    const indent = fence[1] as string;
    const end = lines.findIndex((line, at) => at > i && line === `${indent}\`\`\``);
    if (end === -1) throw new Error(`${relative(root, readme)}:${i + 1}: a code block that never closes`);
    const code = lines
      .slice(i + 1, end)
      .map((line) => line.slice(indent.length))
      .join('\n');
    const marker = /^<!-- not-compiled: (.+) -->$/.exec((lines[i - 1] ?? '').trim());
    const built = /^<!-- built-as: (\S+) -->$/.exec((lines[i - 1] ?? '').trim());
    if (marker !== null) skipped.push(`${relative(root, readme)}:${i + 1} (${marker[1]})`);
    else if (built !== null)
      builtAs.push({ where: `${relative(root, readme)}:${i + 2}`, path: built[1] as string, code });
    else {
      mkdirSync(dir, { recursive: true });
      folders.add(dir);
      const file = join(
        dir,
        `${relative(root, readme).replaceAll('/', '_').replace(/\.md$/, '')}-${++n}.${fence[2] === 'tsx' ? 'tsx' : 'ts'}`,
      );
      // A block with no import or export is still a module of its own (its names do not collide).
      writeFileSync(file, /^\s*(import|export)\s/m.test(code) ? code : `${code}\nexport {};\n`);
      blocks.push({ readme, line: i + 2, file });
    }
    i = end;
  }
}

afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

it('hides no context from the reader: no README has a compile-with comment', () => {
  expect(hiddenContext).toEqual([]);
});

it('finds the READMEs and their blocks', () => {
  expect(blocks.length).toBeGreaterThan(30);
  // Fragments are the exception, each with its reason.
  expect(skipped.length).toBeLessThanOrEqual(5);
});

it("equals, block for block, the app file each built-as block names (that app's test builds it)", () => {
  expect(builtAs.length).toBeGreaterThan(0);
  const differ = builtAs
    .filter(({ path, code }) => readFileSync(join(root, path), 'utf8') !== `${code}\n`)
    .map(({ where, path }) => `${where} differs from ${path}`);
  expect(differ).toEqual([]);
});

it('parses every js block of every README as the ES module Node runs (the root quick start is app.mjs)', async () => {
  expect(scripts.length).toBeGreaterThan(0);
  const problems: string[] = [];
  for (const { where, file } of scripts) {
    await run(process.execPath, ['--check', file]).catch((error: { stderr?: string }) =>
      problems.push(`${where}: ${error.stderr ?? String(error)}`),
    );
  }
  expect(problems).toEqual([]);
});

it('compiles every ts block of every README under strict tsc', async () => {
  const tsconfig = join(root, 'test', FOLDER, 'tsconfig.json');
  mkdirSync(dirname(tsconfig), { recursive: true });
  folders.add(dirname(tsconfig));
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: '../../tsconfig.base.json',
      compilerOptions: { noEmit: true, noUnusedLocals: true, jsx: 'react-jsx', allowImportingTsExtensions: true },
      files: blocks.map((b) => b.file),
    }),
  );
  const result = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  // Each error as README:line: the tsc message, so whoever wrote the block finds it at once.
  const problems = result
    .split('\n')
    .filter((line) => /\(\d+,\d+\): error TS/.test(line))
    .map((line) => {
      const [, file, row, message] = /^(.+?)\((\d+),\d+\): (error TS.*)$/.exec(line) ?? [];
      const block = blocks.find((b) => join(root, file ?? '') === b.file || file === b.file);
      return block === undefined ? line : `${relative(root, block.readme)}:${block.line + Number(row) - 1}: ${message}`;
    });
  expect(problems).toEqual([]);
}, 180_000);
