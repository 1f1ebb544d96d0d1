import { configErrorCodes } from '../ports/errorCodes.js';
import { redactCredentials } from '../ports/redactCredentials.js';
import { TroupeError } from '../ports/troupeError.js';

const CONFIG_ERROR = Symbol.for('troupe.error.config');

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
export class ConfigError extends TroupeError {
  declare readonly code: typeof configErrorCodes.invalid;
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(
      configErrorCodes.invalid,
      `Invalid configuration:\n${problems
        .map((p) => `  ${p.variable}=${JSON.stringify(p.value)} is not allowed; expected ${p.expected}`)
        .join('\n')}`,
      { details: { variables: problems.map((p) => p.variable) } },
    );
    this.name = 'ConfigError';
    Object.defineProperty(this, CONFIG_ERROR, { value: true });
    // A URL's credentials never ride along (the message is redacted by TroupeError).
    this.problems = problems.map((p) => ({ ...p, value: redactCredentials(p.value) }));
  }

  /** True for a {@link ConfigError} from any copy of Troupe. */
  static override isInstance(error: unknown): error is ConfigError {
    return (
      typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[CONFIG_ERROR] === true
    );
  }
}
