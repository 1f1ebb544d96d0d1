/**
 * How many runs a fuzz property makes: its CI default (sized so the whole suite's fuzzing takes
 * seconds), or `FUZZ_RUNS` from the environment to run thousands locally:
 *
 *   FUZZ_RUNS=5000 npx vitest run test/fuzz
 */
export function fuzzRuns(ciDefault: number): number {
  const raw = process.env.FUZZ_RUNS;
  if (raw === undefined || raw.trim() === '') return ciDefault;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1 || runs > 10_000_000)
    throw new Error(`FUZZ_RUNS must be a whole number from 1 to 10000000, not ${JSON.stringify(raw)}`);
  return runs;
}
