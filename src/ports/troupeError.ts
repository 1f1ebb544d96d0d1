import type { TroupeErrorCode } from './errorCodes.js';
import { redactCredentials, redactedError } from './redactCredentials.js';

/** Marks every Troupe error, so checks work across duplicated copies of the package. */
const TROUPE_ERROR = Symbol.for('troupe.error');

/** What a {@link TroupeError} is made with besides its code and message. */
export interface TroupeErrorOptions {
  /** True when the same operation may succeed if tried again later (default false). */
  retryable?: boolean;
  /** The underlying error, for logs (pino's `err` serializer prints it); URL credentials in it are redacted. */
  cause?: unknown;
  /** Structured facts for logs (never secrets). */
  details?: Record<string, unknown>;
}

/**
 * The error every Troupe boundary reports: a stable `code` a program can branch on, a message a
 * person can act on, and whether trying again may help. Causes are kept for logs, never shown to
 * end users. Every error class of Troupe's extends it; test for one with
 * {@link TroupeError.isInstance} (or the subclass's own `isInstance`), which, unlike
 * `instanceof`, also holds when two copies of Troupe are installed.
 */
export class TroupeError extends Error {
  /** Stable, upper-snake-case, prefixed `TROUPE_`. */
  readonly code: TroupeErrorCode;
  /** True when the same operation may succeed if tried again later. */
  readonly retryable: boolean;
  /** Structured facts for logs (never secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: TroupeErrorCode, message: string, options: TroupeErrorOptions = {}) {
    // A URL's credentials never ride along in a message or a cause, whoever logs the error.
    super(
      redactCredentials(message),
      options.cause === undefined ? undefined : { cause: redactedError(options.cause) },
    );
    this.name = 'TroupeError';
    Object.defineProperty(this, TROUPE_ERROR, { value: true });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  /** True for any Troupe error, from this copy of the package or another. */
  static isInstance(error: unknown): error is TroupeError {
    return (
      typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[TROUPE_ERROR] === true
    );
  }

  /** A plain object for event streams and stored outcomes. */
  toJSON(): {
    code: TroupeErrorCode;
    message: string;
    retryable: boolean;
    details?: Record<string, unknown>;
  } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details ? { details: { ...this.details } } : {}),
    };
  }
}

/** True for a {@link TroupeError} (also across package copies). Same as `TroupeError.isInstance`. */
export function isTroupeError(error: unknown): error is TroupeError {
  return TroupeError.isInstance(error);
}

/**
 * A short, one-line account of any thrown value, for a log message or an error's own message
 * (`describe(new Error('boom'))` is `boom`). Log the error itself as `{ err }` as well, so pino
 * keeps its stack and cause. Never throws, also for a value that throws when read (a Proxy whose
 * traps throw, an object whose `toString` throws): that is `a value that could not be read`.
 */
export function describe(error: unknown): string {
  try {
    if (error instanceof Error) return redactCredentials(String(error.message));
    if (typeof error === 'string') return redactCredentials(error);
    try {
      return redactCredentials(JSON.stringify(error) ?? String(error));
    } catch {
      return redactCredentials(String(error));
    }
  } catch {
    return 'a value that could not be read';
  }
}
