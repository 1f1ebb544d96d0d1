/**
 * The small port the SQL adapters need from a database, and the helpers that keep identifiers and
 * LIKE patterns safe. A `pg` Pool or Client and a PGlite instance all fit {@link Queryable}.
 */

/** Anything that runs one parameterised statement: a `pg` Pool or Client, PGlite, a transaction. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Quotes a PostgreSQL identifier (`vendor_name` → `"vendor_name"`, `a"b` → `"a""b"`). Only names
 * that come from configuration ever reach SQL text; user input is always a parameter.
 * @throws TypeError for an empty name or one containing a NUL character.
 */
export function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes('\u0000')) throw new TypeError('not a valid SQL identifier');
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Escapes `\`, `%` and `_` so they match literally in a LIKE / ILIKE pattern written with
 * `ESCAPE '\'`.
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/gu, (c) => `\\${c}`);
}

/** How a database failure should be reported. */
export type SqlFailureKind = 'schema' | 'permission' | 'unavailable' | 'undefined_function' | 'other';

/** SQLSTATEs and socket error codes after which trying again later may help. */
const transientCodes = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled (statement timeout)
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * The SQLSTATE (or socket error code) of a failure thrown by `pg` or PGlite, looking inside an
 * AggregateError (Node reports a refused dual-stack connection that way).
 */
export function sqlErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string' && code.length > 0) return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const innerCode = sqlErrorCode(inner);
      if (innerCode) return innerCode;
    }
  }
  return undefined;
}

/** The raw text of a failure, for logs only (never for users: it can name tables and values). */
export function sqlErrorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** Sorts a database failure into what the caller can do about it. */
export function classifySqlError(error: unknown): { kind: SqlFailureKind; code: string | undefined } {
  const code = sqlErrorCode(error);
  if (code === '42703' || code === '42P01') return { kind: 'schema', code };
  if (code === '42501') return { kind: 'permission', code };
  if (code === '42883') return { kind: 'undefined_function', code };
  if (code !== undefined && (code.startsWith('08') || transientCodes.has(code)))
    return { kind: 'unavailable', code };
  // `pg` reports a dropped or timed-out connection without a code.
  if (code === undefined && /connection|terminated|timeout|timed out/iu.test(sqlErrorText(error)))
    return { kind: 'unavailable', code };
  return { kind: 'other', code };
}
