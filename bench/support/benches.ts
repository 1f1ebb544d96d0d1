/**
 * The benchmarks `npm run bench` runs, in order: package.json scripts, each `node <flags> bench/<file>.ts`
 * through the module hooks that serve Troupe from dist/ (register.mjs). Every one takes `--quick`
 * (seconds, small sizes) and prints its headline figures as `BENCH {json}` lines (summary.ts).
 * A test checks that this list and package.json's `bench:*` scripts (and `soak`) are the same.
 */
export const BENCH_SCRIPTS = [
  'bench:coordination',
  'bench:delivery',
  'bench:store',
  'bench:email',
  'bench:discord',
  'bench:html',
  'soak',
] as const;

export type BenchScript = (typeof BENCH_SCRIPTS)[number];

/** The module every benchmark script is run with (`node --import <it>`). */
export const REGISTER = './bench/support/register.mjs';

/** A benchmark's short name: its script without `bench:` (`coordination`, `soak`). */
export const benchName = (script: string) => script.replace(/^bench:/u, '');
