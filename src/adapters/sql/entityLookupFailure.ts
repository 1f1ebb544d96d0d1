import type { EnvelopeAttempts, ToolResultEnvelope } from '../../composer/envelope.js';
import type { Logger } from '../../logging/logger.js';
import type { ParsedInput } from './entityLookupInput.js';
import { SchemaMismatch } from './entitySchema.js';
import { classifySqlError, sqlErrorCode, sqlErrorText } from './sqlSupport.js';

/**
 * The error envelope for a lookup that failed in the database: a stable code and a message a person
 * can act on. The raw database error is logged (warn), never put in the envelope.
 */
export function failureEnvelope(
  logger: Logger,
  input: ParsedInput,
  attempts: EnvelopeAttempts,
  error: unknown,
): ToolResultEnvelope {
  const base = { type: 'error' as const, source: 'database' as const, query: input.query, attempts };
  const label = input.mapping.label;
  const sqlstate = sqlErrorCode(error);
  const log = { entity_type: input.type, sqlstate, error: sqlErrorText(error) };
  if (error instanceof SchemaMismatch) {
    logger.warn(log, 'entity lookup: schema mismatch after refresh');
    return {
      ...base,
      error: {
        code: 'SCHEMA_MISMATCH',
        message: `Couldn't look up ${label}: the table or column the lookup needs is missing.`,
        retryable: false,
      },
    };
  }
  const { kind } = classifySqlError(error);
  logger.warn(log, `entity lookup: ${kind} database error`);
  if (kind === 'permission')
    return {
      ...base,
      error: { code: 'PERMISSION_DENIED', message: `You don't have access to ${label}.`, retryable: false },
    };
  if (kind === 'unavailable')
    return {
      ...base,
      error: {
        code: 'DATABASE_ERROR',
        message: `The database is unavailable or busy, so ${label} couldn't be looked up; try again shortly.`,
        retryable: true,
      },
    };
  return {
    ...base,
    error: { code: 'DATABASE_ERROR', message: `The database couldn't look up ${label}.`, retryable: false },
  };
}
