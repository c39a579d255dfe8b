import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { dedupeStoreConformance } from '../src/testing/index.js';

// The README's "Write your own store" guide, run as written: its store block is written to a module and
// put through the conformance suite, so the guide cannot drift from what the suite demands.
const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const guide = readme.slice(readme.indexOf('## Write your own store'), readme.indexOf('## Also in the box'));
const block = /```ts\n([\s\S]*?)```/.exec(guide)?.[1];
if (block === undefined || !block.includes('class MapStore')) throw new Error('README: no MapStore block in the guide');

const dir = fileURLToPath(new URL('./.readme-guide/', import.meta.url));
mkdirSync(dir, { recursive: true });
// The block imports the published name; inside the package that is the source.
writeFileSync(`${dir}map-store.ts`, block.replace("from '@service-pay/core'", "from '../../src/index.js'"));
const { MapStore } = (await import(`${dir}map-store.ts`)) as {
  MapStore: new () => import('../src/index.js').DedupeStore;
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the README's own store (Write your own store)", () => {
  for (const c of dedupeStoreConformance(() => new MapStore())) it(c.name, c.run);
});
