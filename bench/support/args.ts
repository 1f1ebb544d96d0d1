/** A whole-number command-line option: `raw`, or `fallback` when absent; exits 2 on a bad value. */
export function intArg(raw: string | undefined, fallback: number, name: string, min = 1): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', '').trim());
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`--${name} takes a whole number of at least ${min} (got "${raw}")\n`);
    process.exit(2);
  }
  return n;
}
