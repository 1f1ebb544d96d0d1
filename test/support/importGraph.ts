/** The static import graph of `src/`: which file imports which, read from the source text. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** One import of one source file. */
export interface SourceImport {
  /** The importing file, relative to `src/` (e.g. `actors/runtime.ts`). */
  from: string;
  /** What it names: a file relative to `src/` for relative imports, else the package specifier. */
  target: string;
  /** True for a relative import (a Troupe file). */
  local: boolean;
  /** True for `import()`: loaded on demand, not when the importer loads. */
  dynamic: boolean;
  /** True for `import type` / `export type`: erased, loads nothing. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const STATIC = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every import of every file under `src/`. */
export function importGraph(): SourceImport[] {
  const imports: SourceImport[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const from = path.relative(SRC, file);
    const add = (specifier: string, dynamic: boolean, typeOnly: boolean) => {
      const local = specifier.startsWith('.');
      const target = local
        ? path.relative(SRC, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts')
        : specifier;
      imports.push({ from, target, local, dynamic, typeOnly });
    };
    for (const m of text.matchAll(STATIC)) add(m[3] ?? '', false, m[2] !== undefined);
    for (const m of text.matchAll(DYNAMIC)) add(m[1] ?? '', true, false);
  }
  return imports;
}

/** The top-level folder of a file under `src/` (`actors`, `ports`, ...; `.` for root files). */
export function layerOf(file: string): string {
  const first = file.split(path.sep)[0] ?? '';
  return first.endsWith('.ts') ? '.' : first;
}

/**
 * Packages that load when `entry` loads: static, non-type imports followed through Troupe's own
 * files (a dynamic `import()` loads on demand and is not followed).
 */
export function packagesLoadedBy(entry: string, graph: readonly SourceImport[]): Set<string> {
  const byFile = new Map<string, SourceImport[]>();
  for (const i of graph) byFile.set(i.from, [...(byFile.get(i.from) ?? []), i]);
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of byFile.get(file) ?? []) {
      if (i.dynamic || i.typeOnly) continue;
      if (i.local) visit(i.target);
      else packages.add(i.target);
    }
  };
  visit(entry);
  return packages;
}
