/**
 * The benchmarks cannot be forgotten or rot unseen: every benchmark script is in `npm run bench`'s
 * list, takes `--quick` (which CI runs) and prints summary lines; all of them run Troupe from
 * dist/ through the module hooks, which these tests also run against a small project of their own.
 * Nothing here runs a benchmark or times anything.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_SCRIPTS, REGISTER } from '../../bench/support/benches.js';
import { parseSummaryLine, SUMMARY_PREFIX } from '../../bench/support/summary.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const benchScripts = Object.keys(scripts).filter((name) => name.startsWith('bench:') || name === 'soak');
/** The benchmark file a script runs (`node <flags> bench/<file>.ts`). */
const fileOf = (script: string) => /\s(bench\/[\w.]+\.ts)$/u.exec(scripts[script] ?? '')?.[1];

describe('every benchmark script', () => {
  it('is run by npm run bench', () => {
    expect(benchScripts.length).toBeGreaterThanOrEqual(7);
    expect([...BENCH_SCRIPTS].sort()).toEqual([...benchScripts].sort());
  });

  it.each(benchScripts)('%s runs a bench/ file with node through the dist/ hooks, not tsx', (script) => {
    const command = scripts[script] ?? '';
    expect(command).toMatch(/^node /u);
    expect(command.split(/\s+/u)).toEqual(expect.arrayContaining(['--import', REGISTER]));
    expect(command).not.toMatch(/\btsx\b/u);
    const file = fileOf(script);
    expect(file).toBeDefined();
    expect(() => readFileSync(join(ROOT, file ?? ''), 'utf8')).not.toThrow();
  });

  it.each(benchScripts)('%s takes --quick and prints summary lines', (script) => {
    const source = readFileSync(join(ROOT, fileOf(script) ?? ''), 'utf8');
    expect(source).toMatch(/quick: \{ type: 'boolean'|argv\.includes\('--quick'\)/u);
    expect(source).toMatch(/printSummary\(\s*'/u);
  });

  it('npm run bench is the runner, and CI runs it in quick mode after the tests', () => {
    expect(scripts.bench).toBe(`node --import ${REGISTER} bench/run.ts`);
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const tests = ci.indexOf('npm test');
    const benches = ci.indexOf('npm run bench -- --quick');
    expect(tests).toBeGreaterThan(0);
    expect(benches).toBeGreaterThan(tests);
  });
});

describe('summary lines', () => {
  it('are read back as printed, and a malformed one is reported', () => {
    const figure = {
      bench: 'coordination',
      name: 'compiled floor, 100 channels',
      value: 61_000,
      unit: 'msg/s',
      ratio: 3.2,
      reference: 'xstate engine',
      distModules: 37,
    };
    expect(parseSummaryLine(`${SUMMARY_PREFIX}${JSON.stringify(figure)}`)).toEqual({ figure });
    expect(parseSummaryLine('compiled 61,000 msg/s')).toBeUndefined();
    expect(parseSummaryLine(`${SUMMARY_PREFIX}{"bench":"x"`)).toEqual({
      problem: expect.stringContaining('not JSON'),
    });
    expect(parseSummaryLine(`${SUMMARY_PREFIX}${JSON.stringify({ ...figure, unit: 3 })}`)).toEqual({
      problem: expect.stringContaining('unit'),
    });
  });
});

// Each case starts node, which loads TypeScript once: seconds on a busy machine, so a roomy limit.
describe('the module hooks (bench/support/register.mjs)', { timeout: 120_000 }, () => {
  // A project of its own: src/ with its dist/, and a benchmark file importing the source.
  const project = mkdtempSync(join(tmpdir(), 'troupe-bench-hooks-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  mkdirSync(join(project, 'bench/support'), { recursive: true });
  mkdirSync(join(project, 'src'));
  mkdirSync(join(project, 'dist'));
  for (const file of ['register.mjs', 'distHooks.mjs'])
    cpSync(join(ROOT, 'bench/support', file), join(project, 'bench/support', file));
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }');
  writeFileSync(join(project, 'src/answer.ts'), 'export const from: string = "src";\n');
  writeFileSync(
    join(project, 'bench/probe.ts'),
    [
      "import { from } from '../src/answer.js';",
      'const loaded: Set<string> = (globalThis as any)[Symbol.for("troupe.bench.distModules")];',
      'await new Promise((resolve) => setTimeout(resolve, 20));',
      'console.log(JSON.stringify({ from, loaded: [...loaded].map((u) => u.slice(u.indexOf("/dist/"))) }));',
    ].join('\n'),
  );
  const writeDist = (text: string) => {
    writeFileSync(join(project, 'dist/answer.js'), text);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'dist/answer.js'), later, later);
  };
  const probe = () =>
    spawnSync(process.execPath, ['--import', './bench/support/register.mjs', 'bench/probe.ts'], {
      cwd: project,
      encoding: 'utf8',
    });

  it('serve an import of src/ from dist/, compiling the benchmark file itself', () => {
    writeDist('export const from = "dist";\n');
    const run = probe();
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ from: 'dist', loaded: ['/dist/answer.js'] });
  });

  it('refuse a built file with __name wrappers (what tsx emits)', () => {
    writeDist('var __name = (f) => f;\nexport const from = __name(() => "dist", "from")();\n');
    const run = probe();
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("holds __name( wrappers: dist/ must be tsc's output");
  });

  it('refuse a built file older than its source', () => {
    writeDist('export const from = "dist";\n');
    const earlier = new Date(Date.now() - 3_600_000);
    utimesSync(join(project, 'dist/answer.js'), earlier, earlier);
    const run = probe();
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('is older than');
    expect(run.stderr).toContain('run `npm run build`');
  });
});
