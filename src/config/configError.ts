/** One environment variable that failed validation. */
export interface ConfigProblem {
  variable: string;
  value: string;
  expected: string;
}

/**
 * Thrown at start-up when configuration is invalid. `code` is stable; the message names every
 * bad variable, the value it had and what is allowed, so a person can fix it in one go.
 */
export class ConfigError extends Error {
  readonly code = 'TROUPE_CONFIG_INVALID' as const;
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(
      `Invalid configuration:\n${problems
        .map((p) => `  ${p.variable}=${JSON.stringify(p.value)} is not allowed; expected ${p.expected}`)
        .join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
