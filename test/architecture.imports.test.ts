import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { importGraph, layerOf, packagesLoadedBy, type SourceImport } from './support/importGraph.js';

const graph = importGraph();
const local = graph.filter((i) => i.local);

/** Imports from files in `from` layers to files in `to` layers (type-only imports included). */
function crossings(from: readonly string[], to: readonly string[]): string[] {
  return local
    .filter((i) => from.includes(layerOf(i.from)) && to.includes(layerOf(i.target)))
    .map((i: SourceImport) => `${i.from} -> ${i.target}`);
}

describe('the layers import in one direction', () => {
  it('finds the imports it checks (the graph reader works)', () => {
    expect(local.length).toBeGreaterThan(300);
    expect(local).toContainEqual(
      expect.objectContaining({ from: 'actors/routingActor.ts', target: 'ports/transport.ts' }),
    );
  });

  it('ports import nothing of Troupe but other ports', () => {
    expect(local.filter((i) => layerOf(i.from) === 'ports' && layerOf(i.target) !== 'ports')).toEqual([]);
  });

  it('machines, delivery policy, the composer, config and the email domain never import actors, adapters or entry points', () => {
    expect(
      crossings(
        ['machines', 'delivery', 'composer', 'config', 'email'],
        ['actors', 'adapters', 'cli', 'simulator', 'testing', '.'],
      ),
    ).toEqual([]);
  });

  it('actors never import a concrete adapter, the simulator or the CLI', () => {
    expect(crossings(['actors'], ['adapters', 'simulator', 'cli', 'testing', '.'])).toEqual([]);
  });

  it('adapters never import actors, the simulator or the CLI', () => {
    expect(crossings(['adapters'], ['actors', 'simulator', 'cli', 'testing', '.'])).toEqual([]);
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
