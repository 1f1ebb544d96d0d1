/**
 * Runs every benchmark and prints one table of their headline figures.
 *
 *   npm run bench                       # full sizes (tens of minutes on 2 cores)
 *   npm run bench -- --quick            # seconds each, small sizes: what CI runs, so a benchmark
 *                                       # that no longer runs fails CI (figures printed, never asserted)
 *   npm run bench -- --only coordination,store
 *
 * Each benchmark runs as its package.json script's command (the same node flags) in a child
 * process, one after another; its output passes through, and its `BENCH {json}` lines are
 * collected. The run fails (exit 1) when a benchmark exits non-zero, is killed, prints no summary
 * line or a malformed one, or did not load Troupe from dist/. dist/ is rebuilt first when a source
 * file is newer than its built file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BENCH_SCRIPTS, type BenchScript, benchName } from './support/benches.js';
import { type BenchFigure, parseSummaryLine } from './support/summary.js';

const HELP = `Usage: npm run bench -- [options]

  --quick           every benchmark in its quick mode (seconds each, small sizes)
  --only LIST       only these benchmarks, comma-separated (${BENCH_SCRIPTS.map(benchName).join(', ')})
  --timeout S       stop a benchmark that runs longer than S seconds and fail the run
                    (default 600 with --quick, else none)
  --help            this text
`;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    timeout: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});
if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const only = args.only?.split(',').map((s) => s.trim());
const unknown = only?.filter((name) => !BENCH_SCRIPTS.some((s) => benchName(s) === name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(
    `--only: no benchmark named ${unknown.join(', ')} (there are ${BENCH_SCRIPTS.map(benchName).join(', ')})\n`,
  );
  process.exit(2);
}
const timeoutS = args.timeout === undefined ? (args.quick ? 600 : 0) : Number(args.timeout);
if (!Number.isFinite(timeoutS) || timeoutS < 0) {
  process.stderr.write(`--timeout takes a number of seconds (got "${args.timeout}")\n`);
  process.exit(2);
}
const selected = BENCH_SCRIPTS.filter((s) => only === undefined || only.includes(benchName(s)));

const scripts = z
  .object({ scripts: z.record(z.string(), z.string()) })
  .parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))).scripts;

/** The node arguments of a benchmark script (`node <flags> bench/<file>.ts`). */
function nodeArgsOf(script: BenchScript): string[] {
  const words = (scripts[script] ?? '').trim().split(/\s+/u);
  if (words[0] !== 'node' || words.length < 2)
    throw new Error(`package.json script ${script} should be "node <flags> bench/<file>.ts"`);
  return words.slice(1);
}

/** Source files newer than their built file (or not built at all). */
function staleSources(dir = join(ROOT, 'src')): string[] {
  const stale: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) stale.push(...staleSources(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const built = join(ROOT, 'dist', relative(join(ROOT, 'src'), path)).replace(/\.ts$/u, '.js');
      if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs) stale.push(path);
    }
  }
  return stale;
}

interface Outcome {
  script: BenchScript;
  seconds: number;
  figures: BenchFigure[];
  problems: string[];
}

/** Runs one benchmark; its output passes through while the summary lines are collected. */
function runOne(script: BenchScript): Promise<Outcome> {
  const argv = [...nodeArgsOf(script), ...(args.quick ? ['--quick'] : [])];
  process.stdout.write(`\n=== ${script}: node ${argv.join(' ')}\n`);
  const started = performance.now();
  const figures: BenchFigure[] = [];
  const problems: string[] = [];
  const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let pending = '';
  const take = (line: string) => {
    const read = parseSummaryLine(line);
    if (read === undefined) return;
    if ('problem' in read) problems.push(`malformed summary line: ${read.problem}`);
    else figures.push(read.figure);
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    process.stdout.write(chunk);
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(take);
  });
  const timer =
    timeoutS > 0
      ? setTimeout(() => {
          problems.push(`still running after ${timeoutS} s (--timeout): stopped`);
          child.kill('SIGKILL');
        }, timeoutS * 1000)
      : undefined;
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      take(pending);
      if (code !== 0) problems.push(signal ? `killed by ${signal}` : `exited with code ${code}`);
      else if (figures.length === 0) problems.push('printed no BENCH summary line');
      if (figures.some((f) => f.distModules === 0))
        problems.push('loaded no Troupe module from dist/ (not run through bench/support/register.mjs?)');
      resolve({ script, seconds: (performance.now() - started) / 1000, figures, problems });
    });
  });
}

/** A fixed-width table; the columns `right` names are right-aligned, the others left-aligned. */
function table(header: string[], rows: string[][], right: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A figure as the table shows it: whole numbers from 100 up, else three significant digits. */
function formatValue(n: number | null): string {
  if (n === null) return 'n/a';
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  return Number(n.toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 3 });
}

const stale = staleSources();
if (stale.length > 0) {
  process.stdout.write(`dist/ is older than ${stale.length} source file(s): npm run build\n`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) {
    process.stderr.write('npm run build failed: the benchmarks run on dist/\n');
    process.exit(1);
  }
}

const outcomes: Outcome[] = [];
for (const script of selected) outcomes.push(await runOne(script));

const rows: string[][] = [];
for (const o of outcomes) {
  for (const [i, f] of o.figures.entries()) {
    const versus =
      f.ratio === undefined
        ? ''
        : f.ratio === null
          ? 'n/a'
          : `${f.ratio.toFixed(2)}x ${f.reference ?? ''}`.trim();
    rows.push([i === 0 ? benchName(o.script) : '', f.name, formatValue(f.value), f.unit, versus]);
  }
  rows.push([
    o.figures.length === 0 ? benchName(o.script) : '',
    o.problems.length === 0 ? `(ran in ${o.seconds.toFixed(1)} s)` : `FAILED after ${o.seconds.toFixed(1)} s`,
    '',
    '',
    '',
  ]);
}
const failed = outcomes.filter((o) => o.problems.length > 0);
const modules = Math.max(0, ...outcomes.flatMap((o) => o.figures.map((f) => f.distModules)));
process.stdout.write(
  `\n${args.quick ? 'Quick run (small sizes: the figures show the benchmarks run, not how fast Troupe is)' : 'Benchmarks'}; ` +
    `Troupe loaded from dist/ (up to ${modules} modules per benchmark, none from src/)\n\n` +
    `${table(['bench', 'figure', 'value', 'unit', 'vs reference (same run)'], rows, new Set([2]))}\n`,
);
for (const o of failed) process.stdout.write(`\n${o.script} FAILED: ${o.problems.join('; ')}\n`);
process.exit(failed.length > 0 ? 1 : 0);
