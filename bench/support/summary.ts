/**
 * The machine-readable headline of a benchmark: one `BENCH {json}` line per figure on stdout, which
 * `npm run bench` (bench/run.ts) collects from every benchmark into one table. The figures are
 * printed, never asserted.
 */
import { z } from 'zod';

/** What starts a summary line. */
export const SUMMARY_PREFIX = 'BENCH ';

/** One headline figure of a benchmark. */
export const benchFigureSchema = z.object({
  /** The benchmark, as its package.json script is named without `bench:` (`coordination`, `soak`). */
  bench: z.string().min(1),
  /** What was measured, e.g. `compiled floor msg/s, 1,000 channels`. */
  name: z.string().min(1),
  /** The figure; null when it could not be taken (e.g. heap figures without --expose-gc). */
  value: z.number().nullable(),
  unit: z.string(),
  /** The figure over its reference, measured in the same run (e.g. compiled engine / xstate engine). */
  ratio: z.number().nullable().optional(),
  /** What the ratio is taken against. */
  reference: z.string().optional(),
  /** Troupe modules this process loaded from dist/ (see register.mjs); 0 when not run through it. */
  distModules: z.number().int().nonnegative(),
});
export type BenchFigure = z.infer<typeof benchFigureSchema>;

/** Troupe modules served from dist/ in this process (counted by the module hooks of register.mjs). */
export function distModuleCount(): number {
  const loaded = (globalThis as Record<symbol, unknown>)[Symbol.for('troupe.bench.distModules')];
  return loaded instanceof Set ? loaded.size : 0;
}

const finiteOrNull = (n: number | null | undefined) =>
  n === null || n === undefined || !Number.isFinite(n) ? null : n;

/** Prints the summary lines of one benchmark. */
export function printSummary(
  bench: string,
  figures: readonly {
    name: string;
    value: number | null;
    unit: string;
    ratio?: number | null;
    reference?: string;
  }[],
): void {
  const distModules = distModuleCount();
  const lines = figures.map((f) => {
    const figure: BenchFigure = {
      bench,
      name: f.name,
      value: finiteOrNull(f.value),
      unit: f.unit,
      ...(f.ratio !== undefined ? { ratio: finiteOrNull(f.ratio) } : {}),
      ...(f.reference !== undefined ? { reference: f.reference } : {}),
      distModules,
    };
    return `${SUMMARY_PREFIX}${JSON.stringify(figure)}\n`;
  });
  process.stdout.write(lines.join(''));
}

/**
 * Reads one line of a benchmark's output: undefined for an ordinary line, the figure for a summary
 * line, or what is wrong with a summary line that does not parse.
 */
export function parseSummaryLine(line: string): { figure: BenchFigure } | { problem: string } | undefined {
  if (!line.startsWith(SUMMARY_PREFIX)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(line.slice(SUMMARY_PREFIX.length));
  } catch (error) {
    return { problem: `not JSON (${(error as Error).message}): ${line}` };
  }
  const parsed = benchFigureSchema.safeParse(json);
  return parsed.success
    ? { figure: parsed.data }
    : { problem: `${z.prettifyError(parsed.error).replaceAll('\n', '; ')}: ${line}` };
}
