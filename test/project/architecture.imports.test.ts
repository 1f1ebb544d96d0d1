import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importGraph, layerOf, packagesLoadedBy, type SourceImport } from '../support/importGraph.js';

const graph = importGraph();
const local = graph.filter((i) => i.local);

/**
 * Every folder of src/, lowest first. A file imports only from its own folder and from rows below
 * its own; folders in one row never import each other. Files named by package.json "exports" are
 * the package's entry points: they only re-export, so they sit above every row.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['ports'],
  ['config'],
  ['logging'],
  ['textRules', 'engine', 'delivery'],
  ['machines'],
  ['floor'],
  ['composer', 'inspect'],
  ['email'],
  ['actors', 'adapters'],
  ['.'],
  ['simulator'],
  ['app'],
  ['testing'],
  ['studio'],
  ['cli'],
];

const entryFiles = new Set(
  Object.values(
    (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        exports: Record<string, string | { types: string }>;
      }
    ).exports,
  ).flatMap((t) => (typeof t === 'string' ? [] : [t.types.replace(/^\.\/dist\/(.*)\.d\.ts$/, '$1.ts')])),
);

const rowOf = (layer: string): number => LAYERS.findIndex((row) => row.includes(layer));

/** Imports that go sideways or up the declared order (entry points excepted). */
function importsAgainstTheOrder(): string[] {
  return local
    .filter((i) => !entryFiles.has(i.from))
    .filter((i) => {
      const from = layerOf(i.from);
      const to = layerOf(i.target);
      return from !== to && rowOf(to) >= rowOf(from);
    })
    .map((i: SourceImport) => `${i.from} -> ${i.target}`);
}

describe('the layers import in one direction', () => {
  it('finds the imports it checks (the graph reader works)', () => {
    expect(local.length).toBeGreaterThan(300);
    expect(local).toContainEqual(
      expect.objectContaining({ from: 'actors/routingActor.ts', target: 'ports/transport.ts' }),
    );
    expect(entryFiles).toContain('index.ts');
    expect(entryFiles).toContain('email/index.ts');
  });

  it('declares every folder of src/ exactly once', () => {
    const folders = [...new Set(importGraph().map((i) => layerOf(i.from)))].sort();
    expect([...LAYERS.flat()].sort()).toEqual(folders);
  });

  it('every import follows the declared order', () => {
    expect(importsAgainstTheOrder()).toEqual([]);
  });

  it('ports import nothing of Troupe but other ports', () => {
    expect(local.filter((i) => layerOf(i.from) === 'ports' && layerOf(i.target) !== 'ports')).toEqual([]);
  });

  it('the model port carries no floor internals', () => {
    const modelPort = graph.filter((i) => i.from === 'ports/model.ts');
    expect(modelPort).toEqual([]);
  });
});

describe('the root export is light', () => {
  const heavy = [
    'better-sqlite3',
    'ai',
    '@ai-sdk/openai',
    '@ai-sdk/anthropic',
    '@ai-sdk/openai-compatible',
    '@electric-sql/pglite',
    'pg',
    'mongodb',
    'discord.js',
    'googleapis',
    'google-auth-library',
  ];

  it('statically imports none of the heavy packages', () => {
    const loaded = packagesLoadedBy('index.ts', graph);
    expect(loaded.has('xstate')).toBe(true); // the walk reaches the core
    expect([...loaded].filter((p) => heavy.some((h) => p === h || p.startsWith(`${h}/`)))).toEqual([]);
  });

  it('loading it in Node resolves none of them (and loading troupe/sqlite does resolve better-sqlite3)', () => {
    expect(packagesResolvedLoading('./src/index.ts').filter((p) => heavy.includes(p))).toEqual([]);
    expect(packagesResolvedLoading('./src/adapters/store/sqlite/index.ts')).toContain('better-sqlite3');
  });
});

/** Packages Node resolves while it loads `entry` in a fresh process (a resolve hook records them). */
function packagesResolvedLoading(entry: string): string[] {
  const hook = `
    export async function resolve(specifier, context, next) {
      if (!/^(\\.|node:|file:|data:)/.test(specifier)) process.stderr.write('RESOLVED ' + specifier + '\\n');
      return next(specifier, context);
    }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(entry)});`,
    ],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return [...run.stderr.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1] ?? '');
}
