/**
 * The error every Troupe boundary reports: a stable `code` a program can branch on, a message a
 * person can act on, and whether trying again may help. Causes are kept for logs, never shown to
 * end users.
 */
export class TroupeError extends Error {
  /** Stable, upper-snake-case, prefixed `TROUPE_`. */
  readonly code: string;
  /** True when the same operation may succeed if tried again later. */
  readonly retryable: boolean;
  /** Structured facts for logs (never secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TroupeError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  /** A plain object for logs and event streams. */
  toJSON(): { code: string; message: string; retryable: boolean; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details ? { details: { ...this.details } } : {}),
    };
  }
}

/** True for a {@link TroupeError} (also across package copies, by shape). */
export function isTroupeError(error: unknown): error is TroupeError {
  if (error instanceof TroupeError) return true;
  if (!(error instanceof Error)) return false;
  const { code, retryable } = error as Error & { code?: unknown; retryable?: unknown };
  return typeof code === 'string' && code.startsWith('TROUPE_') && typeof retryable === 'boolean';
}
