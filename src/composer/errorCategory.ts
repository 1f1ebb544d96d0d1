/**
 * Sorts an envelope's stable error `code` into the three kinds of failure a reply explains
 * differently ("Categorizes error responses"). Codes are compared case-insensitively,
 * with spaces and hyphens read as `_`.
 *
 * - permissions: {@link permissionCodes} (the user lacks access: tell them whom to ask);
 * - schema: {@link schemaCodes} (the database layout no longer matches the lookup);
 * - system: every other code (a generic failure; retry advice follows `error.retryable`).
 */
import type { ErrorCategory } from './composedReply.js';

/** Codes that mean the user (or the agent's role) may not read the data. */
export const permissionCodes: readonly string[] = [
  'PERMISSION_DENIED',
  'ACCESS_DENIED',
  'FORBIDDEN',
  'UNAUTHORIZED',
  'NOT_AUTHORIZED',
  'INSUFFICIENT_PRIVILEGE',
  '42501', // PostgreSQL insufficient_privilege
];

/**
 * Codes that mean the table or column a lookup needs is missing or changed.
 * `SCHEMA_REFRESH_FAILED`: the refresh itself failed, so no retry on the new layout happened.
 */
export const schemaCodes: readonly string[] = [
  'SCHEMA_MISMATCH',
  'SCHEMA_REFRESH_FAILED',
  'SCHEMA_CHANGED',
  'UNDEFINED_TABLE',
  'UNDEFINED_COLUMN',
  '42P01', // PostgreSQL undefined_table
  '42703', // PostgreSQL undefined_column
];

/** System codes that mean the request itself was unusable: asking differently helps, retrying does not. */
export const invalidInputCodes: readonly string[] = ['INVALID_INPUT', 'BAD_REQUEST', 'INVALID_QUERY'];

/**
 * System codes that mean the database refused a new record's values: a duplicate of a unique
 * value, a broken check, a missing required value, a reference to nothing, a value of the wrong type.
 */
export const constraintCodes: readonly string[] = [
  'UNIQUE_VIOLATION',
  'CHECK_VIOLATION',
  'NOT_NULL_VIOLATION',
  'FOREIGN_KEY_VIOLATION',
  'INVALID_INPUT',
  '23505',
  '23514',
  '23502',
  '23503',
];

/** System codes that mean a temporary outage: retrying later may help unless `retryable` is false. */
export const temporaryCodes: readonly string[] = [
  'TIMEOUT',
  'STATEMENT_TIMEOUT',
  'UNAVAILABLE',
  'DATABASE_UNAVAILABLE',
  'CONNECTION_FAILED',
  'RATE_LIMITED',
];

/** `permission-denied` → `PERMISSION_DENIED`. */
export function normaliseErrorCode(code: string): string {
  return code
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/gu, '_');
}

/** The category of a stable error code. */
export function errorCategoryOf(code: string): ErrorCategory {
  const normalised = normaliseErrorCode(code);
  if (permissionCodes.includes(normalised)) return 'permissions';
  if (schemaCodes.includes(normalised)) return 'schema';
  return 'system';
}

/**
 * The code as it may be shown to a user for support ("error code DATABASE_ERROR"), or undefined
 * when it does not look like a stable identifier (so free text never reaches the reply).
 */
export function displayableCode(code: string): string | undefined {
  const trimmed = code.trim();
  return /^[A-Z][A-Z0-9_]{1,63}$/u.test(trimmed) || /^[0-9A-Z]{5}$/u.test(trimmed) ? trimmed : undefined;
}

/** What every error reply reads off an error's code: its category, its normal form, the admin line. */
export interface ErrorFacts {
  errorCategory: ErrorCategory;
  normalised: string;
  /** `lead` followed by "tell your administrator", with the code when it may be shown. */
  tellAdmin: (lead: string) => string;
}

/** The {@link ErrorFacts} of an error code. */
export function errorFactsOf(code: string): ErrorFacts {
  const shown = displayableCode(code);
  return {
    errorCategory: errorCategoryOf(code),
    normalised: normaliseErrorCode(code),
    tellAdmin: (lead) =>
      `${lead} tell your administrator${shown === undefined ? '' : ` (error code ${shown})`}.`,
  };
}
