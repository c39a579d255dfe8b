#!/usr/bin/env node
// `pnpm check:merchant-apps`: the merchant's mistakes, tried in a fresh app built from the packed tarballs.
// Packs every package (scripts/pack-all.mjs; run `pnpm build` first), makes ONE app folder under the OS temp
// dir, `npm install`s the tarballs and the real clients from the registry (the versions this repository's
// own package.json files use), generates the Prisma clients, then runs one small merchant program per client
// (app/*.ts, written from the store READMEs, real Express on 127.0.0.1) through app/drive.mjs. Prints a
// markdown table, client x mistake -> credits, statuses, codes, and whether the message names the fix and
// the right store. Exit 1 on two credits (outside a cell the store warned about at start-up), a lost
// credit, a wrong store name or a crash. `--keep` leaves the app folder; MERCHANT_ONLY=mysql2,Knex runs
// only the clients whose label contains one of those words; `--results <file>` judges a kept results.json.
// The last group of `pnpm test` (test/merchant-apps). A whole run took 84-109 s on a quiet 2-core machine and
// 5 min 47 s to 6 min 58 s on a loaded one, most of it npm install (18-94 s) and compiling better-sqlite3
// (55-187 s: its install script finds no prebuilt binary where only the npm registry is reachable, and
// compiles SQLite from source).
// The env below is the one packages/test-kit's generatePrismaClient uses: this file runs on plain Node, which
// cannot import test-kit's TypeScript sources.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const keep = process.argv.includes('--keep');
const timings = [];

function step(name, command, args, options = {}) {
  const started = Date.now();
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  timings.push(`${name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (result.status !== 0) {
    console.error(`merchant apps: ${name} failed (${command} ${args.join(' ')})\n${result.stdout}${result.stderr}`);
    process.exit(1);
  }
  return result.stdout;
}

const resultsFlag = process.argv.indexOf('--results');
if (resultsFlag !== -1) {
  // Judges a results.json of an earlier run (left by --keep) without installing anything.
  const { table, failures } = judge(JSON.parse(readFileSync(process.argv[resultsFlag + 1], 'utf8')));
  console.log(`${table}\n${failures.map((f) => `- ${f}`).join('\n')}`);
  process.exit(failures.length > 0 ? 1 : 0);
}

const started = Date.now();
step('pack', process.execPath, [join(root, 'scripts/pack-all.mjs')], { cwd: root });
const tarballs = Object.fromEntries(
  readdirSync(join(root, 'tarballs')).map((file) => [
    file.replace(/^service-pay-(.*)-\d+\.\d+\.\d+.*\.tgz$/, '$1'),
    file,
  ]),
);

// The clients at the versions this repository tests with, from the packages' own package.json files.
const versions = {};
for (const pkg of ['packages/postgres', 'packages/mysql', 'packages/sqlite', 'test']) {
  const json = JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8'));
  Object.assign(versions, json.dependencies, json.devDependencies);
}
const clients = [
  'pg',
  'postgres',
  '@prisma/client',
  'prisma',
  '@prisma/adapter-pg',
  '@prisma/adapter-mariadb',
  'drizzle-orm',
  'kysely',
  'knex',
  'typeorm',
  'mysql2',
  'mariadb',
  'better-sqlite3',
  'express',
  'tsx',
];
const app = mkdtempSync(join(tmpdir(), 'service-pay-merchant-'));
const dependencies = Object.fromEntries(clients.map((name) => [name, versions[name]]));
for (const name of ['core', 'express', 'postgres', 'mysql', 'sqlite']) {
  dependencies[`@service-pay/${name}`] = `file:${join(root, 'tarballs', tarballs[name])}`;
}
writeFileSync(
  join(app, 'package.json'),
  `${JSON.stringify({ name: 'merchant-apps', private: true, type: 'module', dependencies }, null, 2)}\n`,
);
cpSync(join(here, 'app'), app, { recursive: true });
console.log(`app folder: ${app}`);

try {
  // Install scripts off: Prisma's would download its schema engine (not needed: `prisma generate` runs on a
  // stub below, tables are made with plain SQL); better-sqlite3's runs next, alone.
  step('npm install', 'npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: app,
  });
  step('better-sqlite3 build', 'npm', ['rebuild', 'better-sqlite3', '--loglevel=error'], { cwd: app });

  const suffix = `ma${randomBytes(4).toString('hex')}`;
  const stub = join(app, 'schema-engine-stub');
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  for (const schema of ['pg', 'mysql']) {
    const file = join(app, 'prisma', `${schema}.prisma`);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('@@map("CREDITS_TABLE")', `@@map("merchant_credits_${suffix}")`),
    );
    step(`prisma generate (${schema})`, join(app, 'node_modules/.bin/prisma'), ['generate', '--schema', file], {
      cwd: app,
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: stub,
        PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
    });
  }

  const driveStarted = Date.now();
  const drive = spawnSync(process.execPath, ['drive.mjs'], {
    cwd: app,
    env: { ...process.env, MERCHANT_SUFFIX: suffix },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  timings.push(`merchant programs ${((Date.now() - driveStarted) / 1000).toFixed(1)} s`);
  if (drive.status !== 0) {
    console.error('merchant apps: drive.mjs failed');
    process.exit(1);
  }
  const results = JSON.parse(readFileSync(join(app, 'results.json'), 'utf8'));
  const { table, failures } = judge(results);
  console.log(`\n${table}\n`);
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s (${timings.join(', ')})`);
  if (failures.length > 0) {
    console.error(`\n${failures.length} failure(s):\n${failures.map((f) => `- ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
} finally {
  if (keep) console.log(`kept ${app}`);
  else rmSync(app, { recursive: true, force: true });
}

/**
 * What each kind of case must show, and the table. Fails (exit 1): more than one credit (except a global
 * write on a client the store warned about at start-up, shown as "known"), a payment recorded or answered
 * 200 without its credit, a message naming another store, a crash or no answer. Shown as a note only: a
 * mistake ending with no credit but not with the refusal its README promises.
 */
function judge(results) {
  const failures = [];
  const rows = [
    '| client | mistake | credits | HTTP (attempt, retry) | error code (log) | names the fix | names the store | verdict |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const promised = {
    global: ['WRITE_OUTSIDE_TRANSACTION', 'OWN_TRANSACTION_IN_HANDLER'],
    own: ['OWN_TRANSACTION_IN_HANDLER'],
    unawaited: ['QUERY_NOT_AWAITED'],
  };
  for (const r of results) {
    if (r.crash !== undefined) {
      failures.push(`${r.client}: crash: ${r.crash}`);
      rows.push(`| ${r.client} | (start) | | | | | | FAIL: crash: ${firstLine(r.crash)} |`);
    }
    for (const c of r.cases) {
      const kind = c.name.startsWith('empty') ? 'empty' : c.name.slice(0, c.name.indexOf(':'));
      const messages = c.logs.map((l) => l.message ?? '').filter((m) => m !== '');
      const codes = [...new Set(c.logs.map((l) => l.errCode ?? l.code).filter(Boolean))];
      const statuses = c.attempts.map((a) => (a.error === undefined ? `${a.status}` : `${a.status} ${a.error}`));
      const refusal = codes.find((code) => promised[kind]?.includes(code));
      const fix = kind === 'unawaited' ? '`await`' : 'ctx.tx';
      const namesFix = refusal === undefined ? '' : messages.some((m) => m.includes(fix)) ? 'yes' : 'NO';
      const named = new Set(messages.flatMap((m) => [...m.matchAll(/\b([A-Z][A-Za-z0-9]*Store)\b/g)].map((x) => x[1])));
      const wrongStore = [...named].filter((name) => name !== r.store);
      const namesStore = named.size === 0 ? '' : wrongStore.length === 0 ? 'yes' : `NO: ${wrongStore.join(', ')}`;
      const problems = [];
      let known;
      if (c.credits > 1) {
        if (kind === 'global' && r.warnings.length > 0)
          known = `${c.credits} credits (SERVICE_PAY_UNGUARDED at start-up)`;
        else problems.push(`${c.credits} credits`);
      }
      const recorded = c.attempts.some((a) => a.status === 200) || c.inbox === 'credited';
      if (c.credits === 0 && recorded) problems.push('lost: recorded without its credit');
      if (wrongStore.length > 0) problems.push(`names ${wrongStore.join(', ')}, not ${r.store}`);
      if (c.attempts.some((a) => a.status === 0)) problems.push('no answer');
      if (kind === 'empty' && c.credits !== 1 && !named.has(r.store)) problems.push('not credited, store not named');
      for (const p of problems) failures.push(`${r.client} / ${c.name}: ${p}`);
      let verdict = 'ok';
      if (problems.length > 0) verdict = `FAIL: ${problems.join('; ')}`;
      else if (known !== undefined) verdict = `known: ${known}`;
      else if (kind !== 'empty' && c.credits === 0 && refusal === undefined)
        verdict = 'ok, but not the promised refusal';
      else if (kind !== 'empty' && refusal !== undefined && namesFix !== 'yes')
        verdict = `ok, but the message lacks ${fix}`;
      rows.push(
        `| ${r.client} | ${c.name} | ${c.credits} | ${statuses.join(', ')} | ${codes.join(', ')} | ${namesFix} | ${namesStore} | ${verdict} |`,
      );
    }
  }
  return { table: rows.join('\n'), failures };
}

function firstLine(text) {
  return text.split('\n')[0].replaceAll('|', '/');
}
